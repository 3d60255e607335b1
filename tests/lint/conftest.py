"""Shared helpers for the static checker's tests."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "cases"
CORRECT = ROOT / "tests" / "corpus" / "correct"
MARKER = re.compile(r"#\s*(error|static|runtime):\s*(TW\d{3}(?:\s*,\s*TW\d{3})*)")


def static_markers(source: str) -> set[tuple[str, int]]:
    """(code, line) of every marker that binds the static detector."""
    from trainwell.catalog import CATALOG, STATIC

    expected = set()
    for number, line in enumerate(source.splitlines(), 1):
        for kind, codes in MARKER.findall(line):
            if kind == "runtime":
                continue
            for code in re.split(r"\s*,\s*", codes):
                if code in CATALOG and STATIC in CATALOG[code].detectors:
                    expected.add((code, number))
    return expected


@pytest.fixture
def markers():
    """The function that reads a case file's static markers."""
    return static_markers
