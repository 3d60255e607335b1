"""The shared case corpus: the static checker reports exactly the static markers, and nothing on good files."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainwell.catalog import STATIC, enabled_codes
from trainwell.lint.runner import check_source

ROOT = Path(__file__).resolve().parents[2]
CASES = sorted((ROOT / "tests" / "cases").glob("TW*/*.py"))
CORRECT = ROOT / "tests" / "corpus" / "correct"


def _report(path: Path, extra: set[str]) -> set[tuple[str, int]]:
    source = path.read_text(encoding="utf-8")
    codes = enabled_codes(detector=STATIC) | extra
    findings, problems = check_source(source, str(path), codes)
    assert not problems, problems
    return {(f.code, f.line) for f in findings}


@pytest.mark.parametrize("path", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_case(path: Path, markers) -> None:
    expected = markers(path.read_text(encoding="utf-8"))
    folder = path.parent.name  # the folder's own code is on too, so opt-in codes (TW503) are tested on their good cases
    reported = _report(path, {code for code, _ in expected} | ({folder} & enabled_codes(["ALL", folder], detector=STATIC)))
    if path.name.startswith("good_"):
        assert reported == set(), "a good case must produce nothing"
    assert reported == expected


@pytest.mark.parametrize("path", sorted(CORRECT.glob("*.py")), ids=lambda p: p.name)
def test_correct_corpus_is_clean(path: Path) -> None:
    assert _report(path, set()) == set()


def test_there_are_cases() -> None:
    assert len(CASES) >= 40
