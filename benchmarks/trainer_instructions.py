"""The Trainer's cost per epoch in CPU instructions, against the plain loops, under valgrind.

Wall-clock ratios on a shared machine move by more than the few percent the
Trainer's bars are about (two runs of the same loop differ by up to a quarter
on the 2-core machine this project is measured on); the count of instructions
a run executes does not. Each variant of ``trainer_speed.py`` runs in its own
process under ``valgrind --tool=cachegrind`` twice, for two numbers of epochs;
the difference, divided by the extra epochs, is one epoch's instructions with
the imports, the model build and the start-up left out. Every ratio is one of
those per-epoch counts against another's, measured in the same run. Hash
randomization is off in the children (``PYTHONHASHSEED=0``): with it on, two
runs of the same loop differ by tens of millions of instructions, a tenth of
an epoch; with it off, by under a million (0.004%).

    python benchmarks/trainer_instructions.py                       # digits, MLP, CNN; quick sizes
    python benchmarks/trainer_instructions.py --workloads digits --variants plain,trainer --jobs 2

Instructions are not time: a fused optimizer step does more per instruction,
a cache miss costs more than one. What the count shows exactly is the
Python-side work a loop adds per step, which is where a trainer's overhead
lives. Needs valgrind (``apt install valgrind``); each process starts PyTorch
under it, about 90 s on the 2-core machine.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
VARIANTS = ("plain", "trainer", "loader", "named", "tutorial")
WORKLOADS = ("digits", "mlp", "cnn")
_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")


def child(variant: str, workload: str, epochs: int, quick: bool) -> None:
    """Run one variant for ``epochs`` epochs (the process valgrind counts)."""
    sys.path.insert(0, str(HERE))
    import torch

    import trainer_speed as ts
    import trainwell.fit  # noqa: F401 - imported by every variant alike, whether it uses it or not

    torch.set_num_threads(1)
    chosen = next(w for w in ts.workloads(quick) if w.name.startswith(workload))
    ts.time_once(ts.variants()[variant], dataclasses.replace(chosen, epochs=epochs))


def instructions(variant: str, workload: str, epochs: int, quick: bool) -> int:
    """Instructions valgrind counts for one run of ``variant`` (the whole process)."""
    command = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
               sys.executable, str(Path(__file__).resolve()), "--child", variant, workload, str(epochs)]
    if quick:
        command.append("--quick")
    env = {**os.environ, "PYTHONHASHSEED": "0"}  # str hashes, so dict layouts, the same in every run: counts repeat
    with tempfile.TemporaryFile() as log:
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=log, check=False, start_new_session=True, env=env)
        log.seek(0)
        text = log.read().decode(errors="replace")
    found = _REFS.search(text)
    if done.returncode != 0 or found is None:
        tail = text.strip().splitlines()[-3:]
        raise SystemExit(f"error: {variant} on {workload} ({epochs} epochs) failed under valgrind: {' / '.join(tail)}")
    return int(found.group(1).replace(",", ""))


def per_epoch(counts: dict[int, int]) -> float:
    """Instructions of one epoch: the difference of two runs over their difference in epochs."""
    (few, low), (many, high) = sorted(counts.items())
    return (high - low) / (many - few)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default=",".join(WORKLOADS), help=f"comma-separated, of {', '.join(WORKLOADS)}")
    parser.add_argument("--variants", default="plain,trainer,loader,named", help=f"comma-separated, of {', '.join(VARIANTS)}")
    parser.add_argument("--epochs", type=int, nargs=2, default=(2, 6), metavar=("FEW", "MANY"))
    parser.add_argument("--full", action="store_true", help="the full-size MLP and CNN data (hours under valgrind)")
    parser.add_argument("--jobs", type=int, default=1, help="valgrind processes at once")
    parser.add_argument("--child", nargs=3, metavar=("VARIANT", "WORKLOAD", "EPOCHS"), help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child[0], args.child[1], int(args.child[2]), args.quick)
        return 0
    workloads = [w for w in args.workloads.split(",") if w]
    variants = [v for v in args.variants.split(",") if v]
    few, many = args.epochs
    problem = (f"unknown --workloads or --variants: {', '.join(sorted(set(workloads) - set(WORKLOADS)) + sorted(set(variants) - set(VARIANTS)))}"
               f" (workloads: {', '.join(WORKLOADS)}; variants: {', '.join(VARIANTS)})"
               if not set(workloads) <= set(WORKLOADS) or not set(variants) <= set(VARIANTS)
               else "--variants must include plain, the baseline of every ratio" if "plain" not in variants
               else f"--epochs FEW MANY needs 0 < FEW < MANY (got {few} {many})" if not 0 < few < many else None)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    if shutil.which("valgrind") is None:
        print("error: valgrind is not installed; install it (apt install valgrind) to count instructions", file=sys.stderr)
        return 2
    quick = not args.full
    runs = [(v, w, e) for w in workloads for v in variants for e in (few, many)]
    with ThreadPoolExecutor(max(args.jobs, 1)) as pool:
        counts = dict(zip(runs, pool.map(lambda run: instructions(*run, quick), runs)))
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {'quick' if quick else 'full'} sizes, epochs {few} and {many}")
    for workload in workloads:
        epoch = {v: per_epoch({e: counts[(v, workload, e)] for e in (few, many)}) for v in variants}
        line = f"{workload:8s} plain {epoch['plain'] / 1e6:9.1f}M instructions/epoch"
        for variant in variants:
            if variant != "plain":
                line += f"  {variant}/plain {epoch[variant] / epoch['plain']:.4f}x"
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
