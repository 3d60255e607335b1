"""The `trainwell` command: subcommands, argument parsing and exit codes.

Each subcommand lives beside the code it drives (``trainwell/<part>/command.py``)
and exposes ``add_arguments(parser)`` and ``run(args) -> int``. Those modules
import nothing heavy at module level, so `trainwell check` never pays for
``import torch``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from trainwell import __version__
from trainwell.errors import TrainwellError

# name -> (module, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "fit": ("trainwell.fit.command", "train a model with the trainwell Trainer (default: an MLP on scikit-learn's digits)"),
    "check": ("trainwell.lint.command", "find silent training-loop bugs in Python source, without running it"),
    "rule": ("trainwell.catalog.command", "print the documentation page of a rule (or --all to list them)"),
    "run": ("trainwell.runtime.command", "run a training script and report the silent bugs it commits"),
    "memory": ("trainwell.memory.command", "how much memory training needs, and what each saving buys"),
    "verify-resume": ("trainwell.fit.verify_command", "check that stopping and resuming your run gives bitwise-identical weights"),
}


def _available_subcommands() -> dict[str, object]:
    modules = {}
    for name, (module_name, _) in SUBCOMMANDS.items():
        try:
            modules[name] = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name is not None and error.name.startswith("trainwell"):
                continue  # that part of trainwell is not built yet
            raise
    return modules


def build_parser(modules: dict[str, object]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="trainwell", description="Train PyTorch models right, and find the silent bugs in training loops.")
    parser.add_argument("--version", action="version", version=f"trainwell {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module in modules.items():
        help_text = SUBCOMMANDS[name][1]
        sub = subparsers.add_parser(name, help=help_text, description=help_text)
        module.add_arguments(sub)  # type: ignore[attr-defined]
        sub.set_defaults(_module=module)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    modules = _available_subcommands()
    parser = build_parser(modules)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return int(args._module.run(args) or 0)
    except TrainwellError as error:
        print(f"trainwell: error: {error}", file=sys.stderr)
        return error.exit_code
    except BrokenPipeError:  # output piped into `head` and closed early
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("trainwell: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
