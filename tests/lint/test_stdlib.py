"""Never crashes: every rule over every file of the installed standard library, forced on, no internal error."""

from __future__ import annotations

import sysconfig
from pathlib import Path

from trainwell.catalog import STATIC, enabled_codes
from trainwell.lint.runner import check_source, read_source


def test_stdlib_raises_no_internal_error():
    root = Path(sysconfig.get_paths()["stdlib"])
    codes = enabled_codes(detector=STATIC) | {"TW503"}
    internal, checked = [], 0
    for path in sorted(root.rglob("*.py")):
        if "site-packages" in path.parts or "dist-packages" in path.parts:
            continue
        try:
            source = read_source(path)
        except (OSError, SyntaxError, UnicodeDecodeError, LookupError):
            continue
        _, problems = check_source(source, str(path), codes, force=True)  # force: run every rule, torch or not
        internal += [f"{p.path}: {p.rule}: {p.message}" for p in problems if p.kind == "internal-error"]
        checked += 1
    assert checked > 500
    assert internal == []
