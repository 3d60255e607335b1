"""`trainwell check`: find silent training-loop bugs in Python source without running it.

Exit codes: 0 clean, 1 findings (or a file that does not parse, as ruff does),
2 usage error. Internal errors of one rule are printed but do not decide the
exit code: the other rules' findings do.
"""

from __future__ import annotations

import argparse
import sys


def _codes(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [code.strip() for value in values for code in value.split(",") if code.strip()]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", default=[], metavar="PATH", help="files or folders to check (default: .)")
    parser.add_argument("--format", choices=("text", "json", "sarif", "github"), default="text", help="output format (default: text)")
    parser.add_argument("--select", action="append", metavar="CODES", help="only these codes or prefixes, comma-separated (TW503 is opt-in)")
    parser.add_argument("--ignore", action="append", metavar="CODES", help="skip these codes or prefixes, comma-separated")
    parser.add_argument("--exclude", action="append", default=[], metavar="PATTERN", help="skip files or folders matching this glob (adds to the config's exclude)")
    parser.add_argument("--target-version", metavar="X.Y", help="the oldest PyTorch the code runs on (default: the project's declared minimum, else 2.4)")
    parser.add_argument("--fix", action="store_true", help="apply the safe fixes in place")
    parser.add_argument("--unsafe-fixes", action="store_true", help="with --fix or --diff, apply the unsafe fixes too")
    parser.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; change nothing")
    parser.add_argument("--statistics", action="store_true", help="also print how many findings each code has")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from trainwell.lint import fix, runner
    from trainwell.report import render

    paths = args.paths or ["."]
    report = runner.run(paths, _codes(args.select), _codes(args.ignore), args.target_version, exclude=args.exclude)
    if args.fix or args.diff:
        changed: dict[str, str] = {}
        by_path: dict[str, list] = {}
        for finding in report.findings:
            by_path.setdefault(finding.path, []).append(finding)
        for path, findings in by_path.items():
            after, count = fix.apply_fixes(report.sources[path], findings, args.unsafe_fixes)
            if count:
                changed[path] = after
        if args.diff:
            for path, after in changed.items():
                sys.stdout.write(fix.unified_diff(path, report.sources[path], after))
            return 1 if changed else 0
        for path, after in changed.items():
            Path(path).write_text(after, encoding="utf-8")
        if changed:
            print(f"Fixed {len(changed)} file{'s' * (len(changed) != 1)}.", file=sys.stderr)
            report = runner.run(paths, _codes(args.select), _codes(args.ignore), args.target_version, exclude=args.exclude)
    fixable = sum(fix.applicable(f, args.unsafe_fixes) for f in report.findings)
    render(report.findings, report.problems, args.format, sys.stdout, files=report.files, statistics=args.statistics, fixable=fixable)
    return 1 if report.failed else 0
