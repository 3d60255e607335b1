"""`trainwell check`: find silent training-loop bugs in Python source without running it.

Exit codes: 0 clean, 1 findings (or a file that does not parse, as ruff does),
2 usage error, or no Python file found (a wrong path in CI must not pass).
Internal errors of one rule are printed but do not decide the exit code: the
other rules' findings do. ``--diff`` exits 1 when it would change a file, as
ruff's does.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from trainwell.errors import TrainwellError


def _codes(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [code.strip() for value in values for code in value.split(",") if code.strip()]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", default=[], metavar="PATH",
                        help="files or folders to check: Python files and notebooks (default: .); - reads one file from stdin")
    parser.add_argument("--stdin-filename", metavar="PATH", help="with -, the path the text from stdin is reported (and configured) as")
    parser.add_argument("--force-exclude", action="store_true",
                        help="apply exclude to files named on the command line too (for pre-commit, which names every file)")
    parser.add_argument("--output-file", metavar="FILE", help="write the report to FILE instead of stdout (e.g. --format sarif for code scanning)")
    parser.add_argument("--no-respect-gitignore", dest="respect_gitignore", action="store_false",
                        help="also search what .gitignore / .ignore files exclude (virtualenvs and build outputs stay skipped)")
    parser.add_argument("--format", choices=("text", "json", "sarif", "github"), default="text", help="output format (default: text)")
    parser.add_argument("--select", action="append", metavar="CODES", help="only these codes or prefixes, comma-separated (TW503 is opt-in)")
    parser.add_argument("--ignore", action="append", metavar="CODES", help="skip these codes or prefixes, comma-separated")
    parser.add_argument("--exclude", action="append", default=[], metavar="PATTERN", help="skip files or folders matching this glob (adds to the config's exclude)")
    parser.add_argument("--target-version", metavar="X.Y", help="the oldest PyTorch the code runs on (default: the minimum the project declares, else 2.4)")
    parser.add_argument("--preview", action="store_true", default=None, help="also show lower-confidence findings, marked [preview] (config: preview = true)")
    parser.add_argument("--fix", action="store_true", help="apply the safe fixes in place")
    parser.add_argument("--unsafe-fixes", action="store_true", help="with --fix or --diff, include the fixes that may change behaviour")
    parser.add_argument("--diff", action="store_true", help="print the fixes --fix would apply as a unified diff; change nothing")
    parser.add_argument("--statistics", action="store_true", help="also print how many findings each code has")
    parser.add_argument("--no-cache", action="store_true", help="check every file again instead of reusing results of unchanged files")
    parser.add_argument("--cache-dir", metavar="DIR", help="where results are cached (default: .trainwell_cache beside pyproject.toml)")
    parser.add_argument("--jobs", type=_jobs, metavar="N", help="processes that check files (default: the available cores; output is the same)")


def _jobs(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of processes; give 1 or more, e.g. --jobs 4")
    return int(value)


NOTHING_FOUND = 2  # the exit code when no Python file was found to check


def run(args: argparse.Namespace) -> int:
    from trainwell.lint import runner
    from trainwell.report import render

    paths, text = args.paths or ["."], None
    if "-" in paths:
        if paths != ["-"] or not args.stdin_filename:
            raise TrainwellError("- reads one file from stdin: give it alone, with --stdin-filename PATH (e.g. `check - --stdin-filename train.py`)")
        if args.fix or args.diff:
            raise TrainwellError("--fix and --diff change files: they do not take stdin (-); run them on the file")
        paths, text = [args.stdin_filename], sys.stdin.read()
    elif args.stdin_filename:
        raise TrainwellError("--stdin-filename names the text read from stdin: give - as the path too")

    def check() -> runner.Report:
        return runner.run(paths, _codes(args.select), _codes(args.ignore), args.target_version, exclude=args.exclude,
                          preview=args.preview, cache=not args.no_cache, cache_dir=args.cache_dir,
                          respect_gitignore=args.respect_gitignore, text=text, force_exclude=args.force_exclude, jobs=args.jobs)

    report = check()
    if not report.files and args.force_exclude and all(Path(p).is_file() for p in paths):
        return 0  # every named file is excluded on purpose: pre-commit passed only files the project excludes
    if not report.files:
        print(f"trainwell: warning: No Python files found in {', '.join(map(str, paths))} (virtualenvs, build outputs, hidden folders, "
              f"exclude and .gitignore are skipped; --no-respect-gitignore searches ignored files)", file=sys.stderr)
        return NOTHING_FOUND
    if args.diff:
        return _diff(report, args.unsafe_fixes)
    if args.fix and _fix(report, args.unsafe_fixes):
        report = check()
    if args.output_file:
        try:
            with open(args.output_file, "w", encoding="utf-8") as out:
                render(report.findings, report.problems, args.format, out, files=report.files, statistics=args.statistics,
                       unsafe_fixes=args.unsafe_fixes)
        except OSError as error:
            raise TrainwellError(f"--output-file {args.output_file}: cannot write it ({error.strerror}); give a writable path") from None
    else:
        render(report.findings, report.problems, args.format, sys.stdout, files=report.files, statistics=args.statistics,
               unsafe_fixes=args.unsafe_fixes)
    return 1 if report.failed else 0


def _fixed(report, unsafe: bool) -> tuple[dict[str, str], int]:
    """The fixed text of every file a fix changes, and how many fixes went in."""
    from trainwell.lint import fix, notebook

    by_path: dict[str, list] = {}
    for finding in report.findings:
        by_path.setdefault(finding.path, []).append(finding)
    changed, total = {}, 0
    for path, findings in by_path.items():
        if notebook.is_notebook(path):  # only the fixed cells' sources change; outputs and metadata stay as they are
            after, count = notebook.parse(report.sources[path], path).apply_fixes(findings, unsafe)
        else:
            after, count = fix.apply_fixes(report.sources[path], findings, unsafe)
        if count:
            changed[path], total = after, total + count
    return changed, total


def _more(report, unsafe: bool) -> str:
    hidden = 0 if unsafe else sum(1 for f in report.findings if f.fix is not None and f.fix.applicability == "unsafe")
    return f" ({hidden} more with --unsafe-fixes)" if hidden else ""


def _diff(report, unsafe: bool) -> int:
    """The fixes as a patch on stdout (pure, so it can be piped to ``git apply``); the count on stderr."""
    from trainwell.lint import fix

    changed, total = _fixed(report, unsafe)
    for path, after in changed.items():
        sys.stdout.write(fix.unified_diff(path, report.sources[path], after))
    print(f"Would fix {total} finding{'s' * (total != 1)}{_more(report, unsafe)}.", file=sys.stderr)
    return 1 if changed else 0


def _fix(report, unsafe: bool) -> bool:
    """Write the fixed files; say how many fixes went in. True when a file changed."""
    from pathlib import Path

    from trainwell.lint import source_file

    changed, total = _fixed(report, unsafe)
    for path, after in changed.items():
        source_file.write(Path(path), after)
    if changed or _more(report, unsafe):
        print(f"Fixed {total} finding{'s' * (total != 1)} in {len(changed)} file{'s' * (len(changed) != 1)}{_more(report, unsafe)}.",
              file=sys.stderr)
    return bool(changed)
