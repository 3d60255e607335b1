"""Every fix, applied to the bad cases: the file still parses, keeps its comments, and is clean of that code."""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

import pytest

from trainwell.catalog import STATIC, enabled_codes
from trainwell.lint.fix import apply_fixes
from trainwell.lint.runner import check_source

ROOT = Path(__file__).resolve().parents[2]
CASES = sorted((ROOT / "tests" / "cases").glob("TW*/bad_*.py"))
CODES = enabled_codes(detector=STATIC) | {"TW503"}


def _comments(text: str) -> list[str]:
    return sorted(t.string for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type == tokenize.COMMENT)


def _fixable():
    for path in CASES:
        source = path.read_text(encoding="utf-8")
        findings, _ = check_source(source, str(path), CODES)
        if any(f.fix is not None for f in findings):
            yield path


@pytest.mark.parametrize("path", list(_fixable()), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fix_applies_cleanly(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    findings, _ = check_source(source, str(path), CODES)
    fixed_codes = {f.code for f in findings if f.fix is not None}
    after, count = apply_fixes(source, findings, unsafe=True)
    assert count >= 1 and after != source
    ast.parse(after)
    assert _comments(after) == _comments(source)
    untouched = set(source.splitlines()) - set(after.splitlines())
    assert len(untouched) <= 2 * count  # only the edited (or moved) lines changed
    remaining, _ = check_source(after, str(path), CODES)
    assert not {f.code for f in remaining if f.fix is not None} & fixed_codes


def test_the_required_fixes_exist() -> None:
    fixed = set()
    for path in _fixable():
        source = path.read_text(encoding="utf-8")
        fixed |= {f.code for f in check_source(source, str(path), CODES)[0] if f.fix is not None}
    assert {"TW102", "TW103", "TW105", "TW204", "TW502"} <= fixed


def test_display_fixes_are_never_applied() -> None:
    from trainwell.diagnostic import Edit, Finding, Fix

    finding = Finding("TW502", "m", "p", 1, fix=Fix("x", (Edit(1, 0, 1, 0, "# "),), "display"))
    assert apply_fixes("a = 1\n", [finding], unsafe=True) == ("a = 1\n", 0)


def test_no_fix_moves_a_clip_across_an_accumulation_window() -> None:
    """A clip before every micro-batch's backward, with the step under `if (i + 1) % k == 0:`: moving it after
    backward() would clip each partial sum, not the window's gradients, so the finding carries no fix."""
    path = ROOT / "tests" / "cases" / "TW103" / "bad_every_micro_batch_accumulation.py"
    findings, _ = check_source(path.read_text(encoding="utf-8"), str(path), {"TW103"})
    assert [(f.code, f.fix) for f in findings] == [("TW103", None)]
