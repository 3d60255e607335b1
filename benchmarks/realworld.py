"""`trainwell check` on checkouts of public training code: what it reports, and how fast, against `ast.parse`.

    python benchmarks/realworld.py /work/rw/karpathy+nanoGPT /work/rw/pytorch+examples ...
    python benchmarks/realworld.py --tsv findings.tsv --json findings.json DIR...

For each DIR (a checkout, or a folder inside one) it runs the checker as
`trainwell check DIR` does (the configuration found above DIR, the minimum
PyTorch the project declares) and prints files, lines and findings per DIR,
then the per-code counts over all of them. Timings, measured in this run:
  check     the checker without its cache, on --jobs processes as `trainwell check` (best of --repeats)
  parse     reading and `ast.parse` of every file the checker was given (a notebook: its cells' program),
            on one core and spread over every core: the floor of any checker
  cached    a second run over the unchanged files with a warm cache (best of --repeats)
  cli       `trainwell check` as a fresh process over every DIR with a warm cache
--tsv / --json write every finding (repo, commit, path inside the checkout,
line, code, message) for triage. The commit of a checkout comes from
`git rev-parse HEAD`, else from a `commits.txt` ("owner+name commit" lines)
beside the checkouts.
"""

from __future__ import annotations

import argparse
import ast
import csv
import json
import subprocess
import sys
import tempfile
import time
import warnings
from collections import Counter
from pathlib import Path
from typing import Any, Callable

from trainwell.lint import notebook, runner, source_file, workers


def checkout_of(folder: Path) -> Path:
    """The checkout that holds ``folder``: the nearest folder above with ``.git`` or listed in a commits.txt."""
    folder = folder.resolve()
    for candidate in [folder, *folder.parents]:
        if (candidate / ".git").exists() or candidate.name in commits_beside(candidate):
            return candidate
    return folder


def commits_beside(checkout: Path) -> dict[str, str]:
    listing = checkout.parent / "commits.txt"
    if not listing.is_file():
        return {}
    pairs = (line.split() for line in listing.read_text(encoding="utf-8").splitlines())
    return {p[0]: p[1] for p in pairs if len(p) == 2}


def commit_of(checkout: Path) -> str:
    done = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True)
    if done.returncode == 0 and (checkout / ".git").exists():
        return done.stdout.strip()
    return commits_beside(checkout).get(checkout.name, "")


def best(repeats: int, work: Callable[[], Any]) -> tuple[float, Any]:
    """The shortest of ``repeats`` timed calls, and the last call's result."""
    fastest, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = work()
        fastest = min(fastest, time.perf_counter() - start)
    return fastest, result


def parse_all(files: list[Path], jobs: int = 1) -> int:
    """Read and parse every file (a notebook: the program its code cells form), the checker's baseline, on
    ``jobs`` processes; how many parsed."""
    return sum(workers.map_in_order(parse_one, (), [(path,) for path in files], jobs))


def parse_one(path: Path) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            text = source_file.read(path)[1]
            ast.parse(notebook.program_of(text, str(path)) if notebook.is_notebook(str(path)) else text, filename=str(path))
            return True
        except (SyntaxError, ValueError, OSError):
            return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="+", metavar="DIR", help="checkouts, or folders inside them")
    parser.add_argument("--select", action="append", metavar="CODES", help="as trainwell check --select (default: its default codes)")
    parser.add_argument("--preview", action="store_true", help="include preview findings")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of each measurement (best is shown)")
    parser.add_argument("--tsv", metavar="FILE", help="write the findings as TSV ('-': stdout)")
    parser.add_argument("--json", metavar="FILE", help="write the findings as JSON ('-': stdout)")
    parser.add_argument("--jobs", type=int, default=workers.available_cores(),
                        help="processes of the checker, as `trainwell check --jobs` (default: the available cores)")
    args = parser.parse_args()
    select = [c.strip() for value in args.select or [] for c in value.split(",") if c.strip()] or None
    dirs = [Path(d) for d in args.dirs]
    for folder in dirs:
        if not folder.is_dir():
            parser.error(f"{folder}: not a folder; give checkouts of Python projects")
    report_to = sys.stderr if "-" in (args.tsv, args.json) else sys.stdout

    def check(cache_dir: Path | None = None) -> list[runner.Report]:
        return [runner.run([d], select, preview=args.preview, cache=cache_dir is not None, cache_dir=cache_dir, jobs=args.jobs)
                for d in dirs]

    files = [f for d in dirs for f in runner.discover([d], runner.config_mod.load(d).exclude, runner.config_mod.load(d).root)]
    check_s, reports = best(args.repeats, check)
    parse_s, parsed = best(args.repeats, lambda: parse_all(files))
    parse_all_s, _ = best(args.repeats, lambda: parse_all(files, args.jobs))
    with tempfile.TemporaryDirectory() as cache:
        warm = check(Path(cache))
        cached_s, again = best(args.repeats, lambda: check(Path(cache)))
        same = [[f.to_dict() for f in r.findings] for r in again] == [[f.to_dict() for f in r.findings] for r in warm]
        command = [sys.executable, "-m", "trainwell", "check", "--cache-dir", cache, "--jobs", str(args.jobs),
                   *(["--preview"] if args.preview else []),
                   *(["--select", ",".join(select)] if select else []), *map(str, dirs)]
        subprocess.run(command, capture_output=True)  # the CLI's config and cache keys may differ from the per-DIR runs: warm them
        cli_s, _ = best(args.repeats, lambda: subprocess.run(command, capture_output=True))

    rows = []
    print(f"{'DIR':58s} {'files':>6s} {'lines':>8s} {'findings':>8s}", file=report_to)
    for folder, report in zip(dirs, reports):
        checkout = checkout_of(folder)
        commit = commit_of(checkout)
        print(f"{str(folder)[-58:]:58s} {report.files:6d} {report.lines:8d} {len(report.findings):8d}", file=report_to)
        for finding in report.findings:
            path = Path(finding.path).resolve().relative_to(checkout).as_posix()
            if "cell" in finding.extra:  # a notebook: the line counts inside that cell
                path = f"{path}:cell {finding.extra['cell']}"
            rows.append({"repo": checkout.name, "commit": commit, "path": path, "line": finding.line, "code": finding.code,
                         "preview": finding.preview, "message": finding.message})
        for problem in report.problems:
            print(f"    {problem.path}:{problem.line}:{problem.column}: {problem.kind}: {problem.message}", file=report_to)
    total_files = sum(r.files for r in reports)
    total_lines = sum(r.lines for r in reports)
    print(f"{'total':58s} {total_files:6d} {total_lines:8d} {len(rows):8d}\n", file=report_to)
    for code, count in sorted(Counter(row["code"] for row in rows).items()):
        print(f"{count:6d}  {code}", file=report_to)
    print(f"\ncheck  {check_s:7.2f} s   {total_lines / check_s:10,.0f} lines/s   (--jobs {args.jobs})", file=report_to)
    print(f"parse  {parse_s:7.2f} s   ({parsed} of {len(files)} files parse)   check / parse = {check_s / parse_s:.2f}x", file=report_to)
    print(f"parse  {parse_all_s:7.2f} s   on {args.jobs} processes   check / parse on {args.jobs} = {check_s / parse_all_s:.2f}x",
          file=report_to)
    print(f"cached {cached_s:7.2f} s   ({check_s / cached_s:.0f}x faster than check; same findings as the cold run: {same})", file=report_to)
    print(f"cli    {cli_s:7.2f} s   (`trainwell check` as a new process over every DIR, warm cache, interpreter start included)",
          file=report_to)
    if args.tsv:
        _write(args.tsv, lambda out: _tsv(rows, out))
    if args.json:
        _write(args.json, lambda out: (json.dump(rows, out, indent=1), out.write("\n")))
    return 0


def _tsv(rows: list[dict[str, Any]], out: Any) -> None:
    writer = csv.DictWriter(out, ["repo", "commit", "path", "line", "code", "preview", "message"], delimiter="\t", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)


def _write(target: str, emit: Callable[[Any], Any]) -> None:
    if target == "-":
        emit(sys.stdout)
        return
    with open(target, "w", encoding="utf-8", newline="") as out:
        emit(out)


if __name__ == "__main__":
    sys.exit(main())
