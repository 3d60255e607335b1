"""The injection matrix: realistic training scripts, each catalog bug that the
runtime checker can see injected where it fits, each reported at the right
line and at the first step it happened; the scripts as written report nothing.

A script line ``code  # inject[TW201]: replacement`` becomes ``replacement``
(same indentation, same line numbers) in the TW201 variant; a line marked
``# expect[TW201]: 7`` is where that variant's finding must be, first seen
at step 7 (0: before training). Variants run in this process under
``trainwell.watch()``.
"""

from __future__ import annotations

import contextlib
import io
import re
import runpy
import sys
from pathlib import Path

import pytest

from trainwell.catalog import CATALOG, RUNTIME
from trainwell.runtime.watcher import watch

SCRIPTS = Path(__file__).resolve().parent / "scripts"
TAG = re.compile(r"#\s*(inject|expect)\[(TW\d{3})\]:[ \t]*(.*?)\s*(?=#\s*(?:inject|expect)\[|$)")
DEFAULT = sorted(code for code, entry in CATALOG.items() if entry.default_enabled and RUNTIME in entry.detectors)


def tags(path: Path) -> list[tuple[int, str, str, str]]:
    """(line, kind, code, text) for every inject/expect tag of ``path``."""
    found = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        found += [(number, kind, code, text) for kind, code, text in TAG.findall(line)]
    return found


def variant(path: Path, code: str | None) -> str:
    """``path``'s text with ``code``'s injections applied (None: as written)."""
    lines = path.read_text().splitlines()
    for number, kind, tagged, text in tags(path):
        if kind == "inject" and tagged == code:
            line = lines[number - 1]
            indent = line[: len(line) - len(line.lstrip())]
            lines[number - 1] = indent + text if text else ""
    return "\n".join(lines) + "\n"


def run(source: str, path: Path, select: list[str]) -> tuple[watch, BaseException | None]:
    """Run ``source`` as the script ``path``; return the watch and the error it raised, if any
    (some bugs crash the script after the checker reported them, as TW108 under a GradScaler)."""
    path.write_text(source)
    saved_argv = sys.argv[:]
    sys.argv = [str(path)]
    w = watch(select=select)
    error = None
    try:
        with contextlib.redirect_stdout(io.StringIO()), w:
            runpy.run_path(str(path), run_name="__main__")
    except Exception as raised:  # noqa: BLE001
        error = raised
    finally:
        sys.argv[:] = saved_argv
    return w, error


def cases() -> list[tuple[str, str]]:
    found = []
    for script in sorted(SCRIPTS.glob("*.py")):
        codes = sorted({code for _, kind, code, _ in tags(script) if kind == "expect"})
        found += [(script.name, code) for code in codes]
    return found


def shown(w: watch) -> str:
    return "\n".join(f"{f.code}:{f.line} step {f.step}: {f.message}" for f in w.findings)


@pytest.mark.parametrize("name", sorted(p.name for p in SCRIPTS.glob("*.py")))
def test_the_scripts_as_written_report_nothing(name: str, tmp_path: Path) -> None:
    w, error = run(variant(SCRIPTS / name, None), tmp_path / name, DEFAULT)
    assert (w.findings, w.faults, error) == ([], [], None), shown(w)
    assert w.steps >= 20


@pytest.mark.parametrize("name,code", cases(), ids=[f"{n}-{c}" for n, c in cases()])
def test_each_injected_bug_is_reported_at_its_line_and_first_step(name: str, code: str, tmp_path: Path) -> None:
    script = SCRIPTS / name
    expected = {(code, number, int(text)) for number, kind, tagged, text in tags(script) if kind == "expect" and tagged == code}
    source = variant(script, code)
    assert source != variant(script, None), f"no injection for {code} in {name}"
    w, _ = run(source, tmp_path / name, sorted(set(DEFAULT) | {code}))
    assert w.faults == []
    assert {(f.code, f.line, f.step) for f in w.findings} == expected, shown(w)


def test_every_validation_pass_is_judged_not_only_the_first_and_the_last(tmp_path: Path) -> None:
    """Validation after steps 8 and 16 and the final test after step 20: three passes in train mode."""
    script = SCRIPTS / "epochs_validate_every_k.py"
    w, _ = run(variant(script, "TW202"), tmp_path / script.name, DEFAULT)
    [finding] = w.findings
    assert (finding.code, finding.step, finding.count) == ("TW202", 8, 3)
