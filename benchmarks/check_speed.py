"""How fast `trainwell check` reads code: lines per second on a generated corpus of training
scripts and on the standard library, and the ratio against TorchFix on the same files.

Then, on the same files in the same run, `trainwell check` as it runs from the command line
(`runner.run`, no cache) on one core and on every core (``--jobs``), against the floor
of any checker: reading and ``ast.parse`` of every file, on one core and on every core.

    python benchmarks/check_speed.py                          # TorchFix measured when importable
    python benchmarks/check_speed.py --torchfix-python /tmp/tfvenv/bin/python
    python benchmarks/check_speed.py --copies 10 --repeats 1  # quick

TorchFix is never a dependency: install it in a throwaway environment
(`python3 -m venv /tmp/tfvenv && /tmp/tfvenv/bin/pip install torchfix`) and
point `--torchfix-python` at it. Both tools run in one process each, on the
same files, reading them from memory; each figure is the best of the repeats.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = sorted((ROOT / "tests" / "cases").glob("TW*/*.py")) + sorted((ROOT / "tests" / "corpus" / "correct").glob("*.py"))
NAMES = ("model", "optimizer", "loader", "loss", "scheduler", "criterion", "batch")

_TORCHFIX_TIMER = """
import sys, time, json
from torchfix.torchfix import TorchChecker
files = json.load(open(sys.argv[1]))
sources = [(p, open(p, encoding="utf-8").read().splitlines(keepends=True)) for p in files]
best = float("inf")
for _ in range(int(sys.argv[2])):
    start = time.perf_counter()
    for path, lines in sources:
        list(TorchChecker(None, lines).run())
    best = min(best, time.perf_counter() - start)
print(best)
"""


def generate_corpus(folder: Path, copies: int) -> list[Path]:
    """``copies`` variants of every case and corpus script, identifiers renamed so no two files are equal."""
    files = []
    for index in range(copies):
        for template in TEMPLATES:
            text = template.read_text(encoding="utf-8")
            for name in NAMES:
                text = re.sub(rf"\b{name}\b", f"{name}_{index}", text)
            path = folder / f"{template.parent.name}_{template.stem}_{index}.py"
            path.write_text(text, encoding="utf-8")
            files.append(path)
    return files


def stdlib_files() -> list[Path]:
    root = Path(sysconfig.get_paths()["stdlib"])
    return [p for p in sorted(root.rglob("*.py")) if "site-packages" not in p.parts and "dist-packages" not in p.parts]


def read_all(files: list[Path]) -> list[tuple[str, str]]:
    sources = []
    for path in files:
        try:
            sources.append((str(path), path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            pass
    return sources


def time_trainwell(sources: list[tuple[str, str]], repeats: int, force: bool = False) -> float:
    from trainwell.catalog import STATIC, enabled_codes
    from trainwell.lint.runner import check_source

    codes = enabled_codes(detector=STATIC) | {"TW503"}
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for path, text in sources:
            check_source(text, path, codes, force=force)
        best = min(best, time.perf_counter() - start)
    return best


def time_torchfix(python: str | None, files: list[str], repeats: int) -> float | None:
    """Seconds TorchFix takes on ``files``, or None when it cannot be run."""
    python = python or sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        listing, timer = Path(tmp, "files.json"), Path(tmp, "timer.py")
        listing.write_text(json.dumps(files))
        timer.write_text(_TORCHFIX_TIMER)
        done = subprocess.run([python, str(timer), str(listing), str(repeats)], capture_output=True, text=True)
        if done.returncode != 0:
            return None
        return float(done.stdout.strip().splitlines()[-1])


def _parse_file(path: str) -> None:
    """Read and parse one file: a script, or a notebook's code cells joined (JSON read, then one ``ast.parse``)."""
    import ast
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            text = Path(path).read_text(encoding="utf-8")
            if path.endswith(".ipynb"):
                cells = json.loads(text).get("cells", [])
                text = "\n".join("".join(c.get("source", "")) if isinstance(c.get("source"), list) else str(c.get("source", ""))
                                  for c in cells if c.get("cell_type") == "code")
            ast.parse(text, filename=path)
        except (SyntaxError, ValueError, UnicodeDecodeError, OSError, AttributeError):
            pass


def checked_files(folders: list[str]) -> list[str]:
    """The files `trainwell check` reads under ``folders`` (its own discovery): the parse floor reads the same."""
    from trainwell.lint.discover import discover

    return [str(p) for p in discover(folders)]


def time_floor(paths: list[str], jobs: int, repeats: int) -> float:
    """Seconds to read and ``ast.parse`` every file, spread over ``jobs`` processes."""
    from trainwell.lint import workers

    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        workers.map_in_order(_parse_file, (), [(p,) for p in paths], jobs)
        best = min(best, time.perf_counter() - start)
    return best


def time_check(paths: list[str], jobs: int, repeats: int) -> float:
    """Seconds of ``trainwell check --no-cache --jobs JOBS`` over ``paths`` (in this process)."""
    from trainwell.lint import runner

    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        runner.run(paths, jobs=jobs)
        best = min(best, time.perf_counter() - start)
    return best


def floors(label: str, paths: list[str], repeats: int) -> str:
    """The checker against the parse floor, on one core and on every core (``paths``: files or folders)."""
    from trainwell.lint import workers

    cores = workers.available_cores()
    one, every = time_check(paths, 1, repeats), time_check(paths, cores, repeats)
    files = checked_files(paths)
    parse_one, parse_every = time_floor(files, 1, repeats), time_floor(files, cores, repeats)
    return (f"{label:40s} check 1 core {one:6.2f} s, {cores} cores {every:6.2f} s;  ast.parse floor 1 core "
            f"{parse_one:6.2f} s, {cores} cores {parse_every:6.2f} s;  check({cores}) / floor(1) = {every / parse_one:.2f}x, "
            f"check({cores}) / floor({cores}) = {every / parse_every:.2f}x, check(1) / floor(1) = {one / parse_one:.2f}x")


def count_lines(sources: list[tuple[str, str]]) -> int:
    return sum(text.count("\n") + 1 for _, text in sources)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=20, help="variants of each template in the generated corpus")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--torchfix-python", help="a Python that can import torchfix (default: this one)")
    parser.add_argument("--dirs", nargs="*", default=[], metavar="DIR",
                        help="also time the checker against the parse floor on these folders (e.g. checkouts)")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, one process per tool")
    with tempfile.TemporaryDirectory() as tmp:
        corpus = read_all(generate_corpus(Path(tmp), args.copies))
        stdlib = read_all(stdlib_files())
        rows = [
            ("generated training corpus", corpus, False),
            ("standard library", stdlib, False),
            ("standard library, every rule forced on", stdlib, True),
        ]
        for label, sources, force in rows:
            lines = count_lines(sources)
            ours = time_trainwell(sources, args.repeats, force)
            line = f"{label:40s} {len(sources):6d} files {lines:9d} lines  trainwell {ours:7.2f} s {lines / ours:12,.0f} lines/s"
            if not force:
                theirs = time_torchfix(args.torchfix_python, [p for p, _ in sources], args.repeats)
                line += "  TorchFix: not importable" if theirs is None else f"  TorchFix {theirs:7.2f} s  ratio {theirs / ours:6.1f}x"
            print(line, flush=True)
        print(floors("generated training corpus", [p for p, _ in corpus], args.repeats), flush=True)
        for folder in args.dirs:
            print(floors(folder[-40:], [folder], args.repeats), flush=True)
        if len(args.dirs) > 1:
            print(floors(f"all {len(args.dirs)} folders together", args.dirs, args.repeats), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
