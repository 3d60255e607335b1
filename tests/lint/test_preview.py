"""Confidence as an interface, and one column convention: preview findings are hidden unless asked for,
and marked in every format when shown; columns are 1-based in the API and in every output."""

from __future__ import annotations

import json
import re

import pytest

from trainwell.cli import main

SOURCE = "import torch\nsure = torch.load('a.pt')\nmaybe = torch.load('b.pt')\n"


@pytest.fixture(autouse=True)
def _preview_rule(tmp_path, monkeypatch):
    """TW502 as if its second finding were not fully proven (no rule emits preview findings on its own yet)."""
    from trainwell.lint.rules import all_rules

    rule = all_rules()["TW502"]
    original = rule.check

    def check(ctx):
        for finding in original(ctx):
            finding.preview = finding.line == 3
            yield finding

    monkeypatch.setattr(rule, "check", check)
    monkeypatch.chdir(tmp_path)


def _check(tmp_path, capsys, *argv: str) -> str:
    path = tmp_path / "train.py"
    path.write_text(SOURCE, encoding="utf-8")
    main(["check", "--no-cache", *argv, str(path)])
    return capsys.readouterr().out


def test_preview_findings_are_hidden_by_default(tmp_path, capsys):
    found = json.loads(_check(tmp_path, capsys, "--format", "json"))
    assert [(f["line"], f["preview"]) for f in found] == [(2, False)]


def test_preview_findings_are_marked_in_every_format(tmp_path, capsys):
    found = json.loads(_check(tmp_path, capsys, "--preview", "--format", "json"))
    assert [(f["line"], f["preview"]) for f in found] == [(2, False), (3, True)]

    text = _check(tmp_path, capsys, "--preview").splitlines()
    assert re.search(r"train\.py:3:9: TW502 \[preview\] `torch\.load", "\n".join(text))
    assert not any(":2:9: TW502 [preview]" in line for line in text)

    [sure, maybe] = json.loads(_check(tmp_path, capsys, "--preview", "--format", "sarif"))["runs"][0]["results"]
    assert (sure["level"], sure["properties"]["preview"]) == ("error", False)
    assert (maybe["level"], maybe["properties"]["preview"]) == ("warning", True)
    assert maybe["message"]["text"].startswith("[preview] ")

    sure, maybe = _check(tmp_path, capsys, "--preview", "--format", "github").splitlines()
    assert sure.startswith("::error ") and "title=TW502 unsafe-torch-load::" in sure
    assert maybe.startswith("::warning ") and "title=TW502 unsafe-torch-load (preview)::" in maybe


def test_preview_from_pyproject(tmp_path, capsys):
    (tmp_path / "pyproject.toml").write_text("[tool.trainwell]\npreview = true\n", encoding="utf-8")
    assert [f["line"] for f in json.loads(_check(tmp_path, capsys, "--format", "json"))] == [2, 3]
    (tmp_path / "pyproject.toml").write_text("[tool.trainwell]\npreview = 'yes'\n", encoding="utf-8")
    path = tmp_path / "train.py"
    assert main(["check", str(path)]) == 2
    assert "preview must be true or false" in capsys.readouterr().err


def test_api_columns_are_the_printed_columns(tmp_path, capsys):
    import trainwell

    [finding] = trainwell.check("import torch\nx = 1;  y = torch.load('m.pt')\n", target_version="2.4")
    assert (finding.line, finding.column, finding.end_column) == (2, 13, 31)  # 1-based; the end is just past the call
    text = _check(tmp_path, capsys)
    [item] = json.loads(_check(tmp_path, capsys, "--format", "json"))
    api = trainwell.check(tmp_path / "train.py")[0]
    assert f"train.py:{api.line}:{api.column}: TW502" in text and (item["line"], item["column"]) == (api.line, api.column)


def test_columns_count_characters_not_bytes(tmp_path):
    import trainwell

    [finding] = trainwell.check("import torch\nétat = 'é'; s = torch.load('m.pt')\n", target_version="2.4")
    assert finding.column == len("état = 'é'; s = ") + 1


def test_a_decode_error_is_reported_where_it_is(tmp_path, capsys):
    path = tmp_path / "latin.py"
    path.write_bytes(b"import torch\nname = 'caf\xe9'\n")
    code = main(["check", "--no-cache", str(path)])
    out = capsys.readouterr().out
    assert code == 1
    assert re.search(rf"{re.escape(str(path))}:2:12: read error: cannot read: byte b'\\xe9' is not valid utf-8", out), out
    path.write_bytes(b"# -*- coding: klingon -*-\nimport torch\n")
    main(["check", "--no-cache", "--format", "json", str(path)])
    [problem] = json.loads(capsys.readouterr().out)
    assert (problem["line"], problem["column"]) == (1, 1) and "klingon" in problem["message"]
    path.write_bytes(b"#!/usr/bin/env python\n# coding: latin-1\nimport torch\nname = 'caf\xe9'\n")
    assert main(["check", "--no-cache", str(path)]) == 0  # declared encodings are honoured


def test_public_api_preview(tmp_path):
    import trainwell

    assert [f.line for f in trainwell.check(SOURCE, target_version="2.4")] == [2]
    assert [(f.line, f.preview) for f in trainwell.check(SOURCE, target_version="2.4", preview=True)] == [(2, False), (3, True)]
    (tmp_path / "train.py").write_text(SOURCE, encoding="utf-8")
    assert [f.line for f in trainwell.check(tmp_path, preview=True)] == [2, 3]
