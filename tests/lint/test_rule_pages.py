"""The rule pages' examples run: the checker fires on `## Example` and stays silent on `## Use instead`
(as pylint does for its message docs)."""

from __future__ import annotations

import re

import pytest

from trainwell.catalog import CATALOG, STATIC
from trainwell.lint.runner import check_source

STATIC_CODES = [code for code, entry in CATALOG.items() if STATIC in entry.detectors]


def _block(page: str, heading: str) -> str:
    match = re.search(rf"^## {heading}\s*$(.*?)(?=^## |\Z)", page, re.M | re.S)
    assert match, f"no '## {heading}' section"
    code = re.search(r"```python\n(.*?)```", match.group(1), re.S)
    assert code, f"no python block under '## {heading}'"
    return code.group(1)


def _page(code: str) -> str:
    try:
        return CATALOG[code].page()
    except FileNotFoundError:
        pytest.fail(f"{code} has no page src/trainwell/catalog/rules/{CATALOG[code].page_name}")


@pytest.mark.parametrize("code", STATIC_CODES)
def test_example_fires_and_use_instead_is_silent(code: str) -> None:
    page = _page(code)
    example, fixed = _block(page, "Example"), _block(page, "Use instead")
    fired, problems = check_source(example, f"{code}-example.py", {code})
    assert not problems
    assert code in {f.code for f in fired}, f"{code} does not fire on its own example"
    quiet, problems = check_source(fixed, f"{code}-use-instead.py", {code})
    assert not problems
    assert quiet == [], f"{code} fires on its 'Use instead' block: {[f.message for f in quiet]}"
