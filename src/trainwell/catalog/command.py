"""`trainwell rule CODE` and `trainwell rule --all`."""

from __future__ import annotations

import argparse

from trainwell.errors import TrainwellError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("code", nargs="?", help="a rule code such as TW101, or a rule name such as zero-grad-missing")
    parser.add_argument("--all", action="store_true", help="list every rule: code, name, detectors and summary")


def run(args: argparse.Namespace) -> int:
    from trainwell.catalog import CATALOG

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
