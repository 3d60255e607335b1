"""`trainwell rule CODE` and `trainwell rule --all`."""

from __future__ import annotations

import argparse

from trainwell.errors import TrainwellError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("code", nargs="?", help="a rule code such as TW101, or a rule name such as zero-grad-missing")
    parser.add_argument("--all", action="store_true", help="list every rule: code, name, detectors and summary")
    parser.add_argument("--markdown", action="store_true", help="with --all: the README's rule table (a test keeps the README equal to it)")


def markdown_table() -> str:
    """The catalog as the README's table: a row per code, its page linked, who detects it, error or warning."""
    from trainwell.catalog import CATALOG, RUNTIME, STATIC

    rows = ["| code | name | static | runtime | severity |", "|---|---|---|---|---|"]
    for entry in CATALOG.values():
        name = entry.name + (" (opt-in)" if not entry.default_enabled else "")
        static, runtime = ("yes" if detector in entry.detectors else "" for detector in (STATIC, RUNTIME))
        rows.append(f"| [{entry.code}](docs/rules/{entry.page_name}) | {name} | {static} | {runtime} | {entry.severity} |")
    return "\n".join(rows) + "\n"


def run(args: argparse.Namespace) -> int:
    from trainwell.catalog import CATALOG

    if args.markdown:
        if args.code is not None:
            raise TrainwellError("--markdown prints the table of every rule: give it with --all and no code")
        print(markdown_table(), end="")
        return 0
    if args.all or args.code is None:
        for entry in CATALOG.values():
            detectors = "+".join(sorted(entry.detectors))
            opt_in = "  (opt-in)" if not entry.default_enabled else ""
            print(f"{entry.code}  {entry.name:<28} {detectors:<15} {entry.summary}{opt_in}")
        return 0
    wanted = args.code.strip()
    for entry in CATALOG.values():
        if wanted.upper() == entry.code or wanted.lower() == entry.name:
            print(entry.page(), end="")
            return 0
    raise TrainwellError(f"unknown rule {wanted!r}: give a code such as TW101 or a name such as zero-grad-missing; `trainwell rule --all` lists them")
