"""FileContext.segment is ast.get_source_segment on lines split once (the language server's edit latency depends on it)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from trainwell.lint.context import FileContext

ROOT = Path(__file__).resolve().parents[2]
ODD = "x = 'é'\r\ny = (1,\r\n  2)  # \f form feed is no line break\nz = ('a',\r 'bé', \"\"\"\nü\"\"\")\r"


FILES = sorted((ROOT / "tests" / "cases").glob("TW1*/*.py"))


@pytest.mark.parametrize("source", [ODD, *(p.read_text(encoding="utf-8") for p in FILES)], ids=["crlf-cr-formfeed", *(f"{p.parent.name}/{p.name}" for p in FILES)])
def test_segment_is_get_source_segment(source):
    tree = ast.parse(source)
    ctx = FileContext("f.py", source, tree, (2, 4))
    nodes = [n for n in ast.walk(tree) if hasattr(n, "end_lineno")]
    assert nodes and all(ctx.segment(n) == ast.get_source_segment(source, n) for n in nodes)
