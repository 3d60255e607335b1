"""Every safe fix keeps the program working: applied to the bad cases and the correct corpus, the
fixed scripts parse, keep every other line, are clean of the fixed codes, and still run."""

from __future__ import annotations

import difflib
import importlib.util
import io
import json
import os
import signal
import subprocess
import sys
import tokenize
from collections import Counter
from pathlib import Path

from trainwell.catalog import STATIC, enabled_codes
from trainwell.lint.fix import apply_fixes
from trainwell.lint.runner import check_source

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted((ROOT / "tests" / "cases").glob("TW*/bad_*.py")) + sorted((ROOT / "tests" / "corpus" / "correct").glob("*.py"))
CODES = enabled_codes(detector=STATIC) | {"TW503"}


def _runner_script() -> str:
    """The script tests/catalog/test_cases_run.py runs the cases with (one process, runpy, a per-file alarm)."""
    spec = importlib.util.spec_from_file_location("cases_run", ROOT / "tests" / "catalog" / "test_cases_run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module.RUNNER


def _comments(text: str) -> list[str]:
    return [t.string for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type == tokenize.COMMENT]


def _safe_fixed() -> list[tuple[Path, str, str, list]]:
    """(path, source, fixed source, the findings whose safe fixes went in) for every file a safe fix changes."""
    fixed = []
    for path in FILES:
        source = path.read_text(encoding="utf-8")
        findings, problems = check_source(source, str(path), CODES)
        assert not problems, problems
        safe = [f for f in findings if f.fix is not None and f.fix.applicability == "safe"]
        after, count = apply_fixes(source, safe)
        if count:
            fixed.append((path, source, after, safe))
    return fixed


def test_safe_fixes_keep_every_other_line_and_clear_their_finding():
    fixed = _safe_fixed()
    assert fixed, "no safe fix applies to any case: this test no longer tests anything"
    for path, source, after, safe in fixed:
        compile(after, str(path), "exec")
        assert sorted(_comments(after)) == sorted(_comments(source)), path
        edited = {line for f in safe for e in f.fix.edits for line in range(e.line, e.end_line + 1)}
        before_lines = source.splitlines()
        matcher = difflib.SequenceMatcher(a=before_lines, b=after.splitlines(), autojunk=False)
        for tag, i1, i2, _, _ in matcher.get_opcodes():
            if tag in ("replace", "delete"):
                assert set(range(i1 + 1, i2 + 1)) <= edited, f"{path}: lines {i1 + 1}-{i2} changed outside the fixes' edits"
        before = Counter(f.code for f in check_source(source, str(path), CODES)[0])
        remaining = Counter(f.code for f in check_source(after, str(path), CODES)[0])
        for code, fixed in Counter(f.code for f in safe).items():  # each safe fix clears its own finding
            assert remaining[code] <= before[code] - fixed, f"{path}: {code} still reported after its safe fix"


def test_safely_fixed_scripts_still_run(tmp_path):
    scripts = []
    for path, _, after, _ in _safe_fixed():
        if after.startswith("# case: static-only"):
            continue
        target = tmp_path / f"{path.parent.name}_{path.name}"
        target.write_text(after, encoding="utf-8")
        scripts.append(str(target))
    assert scripts
    proc = subprocess.Popen([sys.executable, "-c", _runner_script(), json.dumps(scripts), "60"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=600)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    assert proc.returncode == 0, err[-3000:]
    report = json.loads(out.strip().splitlines()[-1])
    assert report["failures"] == {}, "\n".join(f"{p}\n{tb}" for p, tb in report["failures"].items())
    assert sorted(report["seconds"]) == sorted(scripts)
