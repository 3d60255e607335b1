"""Bugs are errors, advice (TW404, TW503, TW504) and preview findings are warnings, in every output format."""

from __future__ import annotations

import io
import json

from trainwell.catalog import ADVICE, CATALOG
from trainwell.diagnostic import Finding
from trainwell.report import render

FINDINGS = [Finding("TW502", "a bare torch.load", "t.py", 2, 9), Finding("TW503", "a host sync", "t.py", 5, 3),
            Finding("TW204", "kept", "t.py", 7, 1, preview=True)]


def _render(fmt: str) -> str:
    out = io.StringIO()
    render(FINDINGS, [], fmt, out, files=1)
    return out.getvalue()


def test_advice_codes_are_catalog_codes_and_warnings():
    assert {code for code in ADVICE if code in CATALOG} == {code for code, entry in CATALOG.items() if entry.severity == "warning"}
    assert [f.severity for f in FINDINGS] == ["error", "warning", "warning"]


def test_every_format_says_the_severity():
    text = _render("text").splitlines()
    assert text[0] == "t.py:2:9: TW502 a bare torch.load" and text[1] == "t.py:5:3: TW503 [warning] a host sync"
    assert [item["severity"] for item in json.loads(_render("json"))] == ["error", "warning", "warning"]
    sarif = json.loads(_render("sarif"))["runs"][0]
    assert [r["level"] for r in sarif["results"]] == ["error", "warning", "warning"]
    assert {r["id"]: r["defaultConfiguration"]["level"] for r in sarif["tool"]["driver"]["rules"]} == \
        {"TW204": "error", "TW502": "error", "TW503": "warning"}
    assert [line.split(" ", 1)[0] for line in _render("github").splitlines()] == ["::error", "::warning", "::warning"]
