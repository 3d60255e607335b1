"""`trainwell export RUN_DIR [--best|--last] -o model.safetensors`: a run's weights for plain PyTorch.

No torch import at module level: ``trainwell --help`` stays instant.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", metavar="RUN_DIR", help="a run directory (or one of its .ckpt files)")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--best", dest="which", action="store_const", const="best",
                       help="the best checkpoint (default when the run has one)")
    which.add_argument("--last", dest="which", action="store_const", const="last",
                       help="the newest step checkpoint")
    parser.add_argument("-o", "--output", required=True, metavar="FILE",
                        help="the safetensors file to write, e.g. model.safetensors")


def run(args: argparse.Namespace) -> int:
    from trainwell.fit.weights import export_run

    out = Path(args.output)
    source, state = export_run(args.run, out, args.which)
    where = f"epoch {state.get('epoch', '?')}, step {state.get('step', '?')}"
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB) from {source} ({where}); load it with "
          f"trainwell.load_weights({str(out)!r}, model) or safetensors.torch.load_file")
    return 0
