"""`trainwell check` as users and CI see it: formats, exit codes, selection, noqa, config, errors."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

from trainwell.cli import main

BAD_LOAD = "import torch\nstate = torch.load('model.pt')\n"
MODULE = textwrap.dedent("""\
    import torch
    from torch import nn


    class Net(nn.Module):
        def __init__(self):
            self.fc = nn.Linear(2, 2)
""")


@pytest.fixture(autouse=True)
def _scratch_cwd(tmp_path, monkeypatch):
    """Without a pyproject.toml above the checked files the cache goes to the current folder: keep it in tmp."""
    monkeypatch.chdir(tmp_path)


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["check", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_exit_codes(tmp_path, capsys):
    good = _write(tmp_path, "good.py", "import torch\nstate = torch.load('m.pt', weights_only=True)\n")
    bad = _write(tmp_path, "bad.py", BAD_LOAD)
    assert _run(capsys, str(good))[0] == 0
    assert _run(capsys, str(bad))[0] == 1
    code, _, err = _run(capsys, str(tmp_path / "missing.py"))
    assert code == 2 and err.startswith("trainwell: error:") and "missing.py" in err
    code, _, err = _run(capsys, "--select", "TW999", str(good))
    assert code == 2 and "TW999" in err and err.count("\n") == 1


def test_text_format_groups_by_file_with_hints(tmp_path, capsys):
    bad = _write(tmp_path, "bad.py", BAD_LOAD + MODULE.replace("import torch\n", ""))
    code, out, _ = _run(capsys, str(bad))
    assert code == 1
    lines = out.splitlines()
    assert re.fullmatch(rf"{re.escape(str(bad))}:2:9: TW502 .+", lines[0])
    assert lines[1].startswith("    hint: ")
    assert lines[2].startswith("    unsafe fix (may change behaviour; applied only with --unsafe-fixes): set weights_only=True")
    assert any(re.fullmatch(rf"{re.escape(str(bad))}:\d+:5: TW501 .+", line) for line in lines)
    assert lines[-1] == "2 findings in 1 file: 0 fixable with --fix (1 more with --unsafe-fixes)."
    _, out, _ = _run(capsys, "--unsafe-fixes", str(bad))
    assert re.fullmatch(rf"{re.escape(str(bad))}:2:9: TW502 \[\*\] .+", out.splitlines()[0])
    assert out.splitlines()[-1] == "2 findings in 1 file: 1 fixable with --fix --unsafe-fixes."


def test_json_format(tmp_path, capsys):
    bad = _write(tmp_path, "bad.py", BAD_LOAD)
    _, out, _ = _run(capsys, "--format", "json", str(bad))
    [item] = json.loads(out)
    assert {"code", "name", "message", "path", "line", "column", "end_line", "end_column", "fix"} <= set(item)
    assert (item["code"], item["name"], item["line"], item["column"]) == ("TW502", "unsafe-torch-load", 2, 9)
    assert item["fix"]["applicability"] == "unsafe" and item["fix"]["edits"][0]["content"] == ", weights_only=True"
    # The edit inserts after 'model.pt', whose 0-based end offset is 29: printed 1-based, as every column, that is 30.
    assert (item["fix"]["edits"][0]["line"], item["fix"]["edits"][0]["column"]) == (2, 30)
    assert item["preview"] is False


def test_sarif_format(tmp_path, capsys):
    bad = _write(tmp_path, "bad.py", BAD_LOAD + MODULE.replace("import torch\n", ""))
    _, out, _ = _run(capsys, "--format", "sarif", str(bad))
    log = json.loads(out)
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")
    [run] = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == ["TW501", "TW502"]
    for rule in rules:
        assert rule["name"] and rule["shortDescription"]["text"] and rule["helpUri"].endswith(".md")
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"].endswith("bad.py") and location["region"]["startLine"] >= 1
        assert result["message"]["text"]


def test_github_format(tmp_path, capsys):
    bad = _write(tmp_path, "bad.py", BAD_LOAD)
    _, out, _ = _run(capsys, "--format", "github", str(bad))
    assert re.fullmatch(r"::error file=[^,]+bad\.py,line=2,col=9,endLine=2,title=TW502 unsafe-torch-load::[^\n]+\n", out)


def test_noqa(tmp_path, capsys):
    text = "import torch\na = torch.load('a.pt')  # noqa: TW502\nb = torch.load('b.pt')  # noqa\nc = torch.load('c.pt')  # noqa: TW101\n"
    bad = _write(tmp_path, "noqa.py", text)
    _, out, _ = _run(capsys, "--format", "json", str(bad))
    assert [item["line"] for item in json.loads(out)] == [4]


def test_select_and_ignore(tmp_path, capsys):
    bad = _write(tmp_path, "bad.py", BAD_LOAD + MODULE.replace("import torch\n", ""))

    def codes(*argv: str) -> list[str]:
        _, out, _ = _run(capsys, "--format", "json", *argv, str(bad))
        return sorted(item["code"] for item in json.loads(out))

    assert codes() == ["TW501", "TW502"]
    assert codes("--select", "TW50") == ["TW501", "TW502"]
    assert codes("--select", "TW501") == ["TW501"]
    assert codes("--ignore", "TW502") == ["TW501"]
    assert codes("--select", "TW5", "--ignore", "TW501,TW502") == []


def test_config_in_pyproject(tmp_path, capsys):
    _write(tmp_path, "pyproject.toml", '[project]\nname = "x"\ndependencies = ["torch>=2.6"]\n\n[tool.trainwell]\nignore = ["TW501"]\nexclude = ["skipped"]\n')
    (tmp_path / "src").mkdir()
    (tmp_path / "skipped").mkdir()
    _write(tmp_path / "src", "a.py", BAD_LOAD + MODULE.replace("import torch\n", "") + "x = torch.load('x', weights_only=False)\n")
    _write(tmp_path / "skipped", "b.py", BAD_LOAD)
    _, out, _ = _run(capsys, "--format", "json", str(tmp_path))
    found = json.loads(out)
    # TW501 ignored by config; the bare torch.load is fine for torch>=2.6; the explicit weights_only=False is not.
    assert [(Path(f["path"]).name, f["code"], f["line"]) for f in found] == [("a.py", "TW502", 9)]


def test_a_named_folder_is_checked_even_when_excluded(tmp_path, capsys):
    _write(tmp_path, "pyproject.toml", '[tool.trainwell]\nexclude = ["skipped"]\n')
    (tmp_path / "skipped").mkdir()
    _write(tmp_path / "skipped", "b.py", BAD_LOAD)
    _write(tmp_path, "good.py", "x = 1\n")
    assert _run(capsys, str(tmp_path))[0] == 0  # found by the search: pruned
    assert _run(capsys, str(tmp_path / "skipped"))[0] == 1  # named by the user: checked


def test_config_errors_are_one_line(tmp_path, capsys):
    _write(tmp_path, "pyproject.toml", "[tool.trainwell]\nselcet = ['TW1']\n")
    _write(tmp_path, "a.py", BAD_LOAD)
    code, _, err = _run(capsys, str(tmp_path))
    assert code == 2 and "selcet" in err and err.count("\n") == 1


def test_target_version_decides_bare_torch_load(tmp_path, capsys):
    bad = _write(tmp_path, "load.py", BAD_LOAD)
    assert _run(capsys, "--target-version", "2.4", str(bad))[0] == 1
    assert _run(capsys, "--target-version", "2.6", str(bad))[0] == 0
    assert _run(capsys, "--target-version", "two", str(bad))[0] == 2


def test_parse_error_is_reported_and_the_run_goes_on(tmp_path, capsys):
    broken = _write(tmp_path, "broken.py", "import torch\ndef f(:\n")
    bad = _write(tmp_path, "bad.py", BAD_LOAD)
    code, out, _ = _run(capsys, str(tmp_path))
    assert code == 1
    assert re.search(rf"{re.escape(str(broken))}:2:\d+: syntax error: ", out)
    assert f"{bad}:2:9: TW502" in out


def test_internal_error_in_one_rule_is_reported_and_the_run_goes_on(monkeypatch):
    from trainwell.lint.rules import all_rules
    from trainwell.lint.runner import check_source

    def explode(ctx):
        raise ZeroDivisionError("boom")
        yield  # pragma: no cover

    monkeypatch.setattr(all_rules()["TW501"], "check", explode)
    findings, problems = check_source(BAD_LOAD + MODULE.replace("import torch\n", ""), "f.py", {"TW501", "TW502"})
    assert [f.code for f in findings] == ["TW502"]
    assert [(p.kind, p.rule, p.path) for p in problems] == [("internal-error", "TW501", "f.py")]
    assert "ZeroDivisionError: boom" in problems[0].message


def test_unsafe_fixes_need_unsafe_fixes_in_diff_and_fix(tmp_path, capsys):
    """ruff's convention: --diff and --fix leave unsafe fixes out and say how many there are."""
    original = "import torch\n# keep me\nstate = torch.load(\n    'm.pt',  # the file\n)\n"
    bad = _write(tmp_path, "bad.py", original)
    code, out, err = _run(capsys, "--diff", str(bad))
    assert (code, out, err) == (0, "", "Would fix 0 findings (1 more with --unsafe-fixes).\n")
    code, out, err = _run(capsys, "--diff", "--unsafe-fixes", str(bad))
    assert code == 1 and "+    'm.pt', weights_only=True,  # the file" in out and err == "Would fix 1 finding.\n"
    assert bad.read_text() == original
    code, out, err = _run(capsys, "--fix", str(bad))
    assert code == 1 and bad.read_text() == original and "(1 more with --unsafe-fixes)" in err
    code, out, err = _run(capsys, "--fix", "--unsafe-fixes", str(bad))
    assert code == 0 and "All clear" in out and err == "Fixed 1 finding in 1 file.\n"
    assert bad.read_text() == "import torch\n# keep me\nstate = torch.load(\n    'm.pt', weights_only=True,  # the file\n)\n"


def test_safe_fixes_are_applied_by_fix_alone(tmp_path, capsys, monkeypatch):
    from trainwell.diagnostic import Fix
    from trainwell.lint.rules import all_rules

    rule = all_rules()["TW502"]
    original = rule.check

    def safe_then_unsafe(ctx):
        for finding in original(ctx):
            finding.fix = Fix("add weights_only", finding.fix.edits, "safe" if finding.line == 2 else "unsafe")
            yield finding

    monkeypatch.setattr(rule, "check", safe_then_unsafe)
    bad = _write(tmp_path, "bad.py", BAD_LOAD + "other = torch.load('o.pt')\n")
    code, out, _ = _run(capsys, "--no-cache", str(bad))
    assert out.splitlines()[-1] == "2 findings in 1 file: 1 fixable with --fix (1 more with --unsafe-fixes)."
    assert f"{bad}:2:9: TW502 [*] `" in out and f"{bad}:3:9: TW502 `" in out
    code, out, err = _run(capsys, "--no-cache", "--diff", str(bad))
    assert code == 1 and out.count("weights_only=True") == 1 and err == "Would fix 1 finding (1 more with --unsafe-fixes).\n"
    code, out, err = _run(capsys, "--no-cache", "--fix", str(bad))
    assert bad.read_text() == "import torch\nstate = torch.load('model.pt', weights_only=True)\nother = torch.load('o.pt')\n"
    assert code == 1 and err == "Fixed 1 finding in 1 file (1 more with --unsafe-fixes).\n"


def test_statistics(tmp_path, capsys):
    bad = _write(tmp_path, "bad.py", BAD_LOAD + "b = torch.load('b')\n")
    _, out, _ = _run(capsys, "--statistics", str(bad))
    assert "     2  TW502  unsafe-torch-load" in out


def test_public_api_on_source_and_paths(tmp_path):
    import trainwell

    assert [f.code for f in trainwell.check(BAD_LOAD)] == ["TW502"]
    assert trainwell.check(BAD_LOAD, target_version="2.6") == []
    path = _write(tmp_path, "bad.py", BAD_LOAD)
    assert [(f.code, f.line) for f in trainwell.check(path)] == [("TW502", 2)]
    assert trainwell.check(str(path), ignore=["TW5"]) == []


def test_files_that_never_mention_torch_are_skipped(tmp_path, capsys):
    _write(tmp_path, "plain.py", "def f(:\n")  # not parsed: it cannot hold a training loop
    assert _run(capsys, str(tmp_path))[0] == 0


def test_fix_keeps_the_file_encoding_and_line_endings(tmp_path, capsys):
    bad = tmp_path / "latin.py"
    bad.write_bytes(b"# -*- coding: latin-1 -*-\r\nimport torch\r\nname = 'caf\xe9'\r\nstate = torch.load('m.pt')\r\n")
    assert _run(capsys, "--fix", "--unsafe-fixes", str(bad))[0] == 0
    assert bad.read_bytes() == b"# -*- coding: latin-1 -*-\r\nimport torch\r\nname = 'caf\xe9'\r\nstate = torch.load('m.pt', weights_only=True)\r\n"


def test_file_level_noqa(tmp_path, capsys):
    text = "import torch\n# trainwell: noqa: TW502 -- these loads read files this test wrote\na = torch.load('a.pt')\n" + MODULE.replace("import torch\n", "")
    bad = _write(tmp_path, "file_noqa.py", text)
    _, out, _ = _run(capsys, "--format", "json", str(bad))
    assert [item["code"] for item in json.loads(out)] == ["TW501"]
    bad.write_text(text.replace("# trainwell: noqa: TW502 --", "# trainwell: noqa --"), encoding="utf-8")
    assert _run(capsys, str(bad))[0] == 0
    bad.write_text(text.replace("# trainwell: noqa: TW502 --", "x = 1  # trainwell: noqa --"), encoding="utf-8")  # not on a line of its own
    _, out, _ = _run(capsys, "--format", "json", str(bad))
    assert sorted(item["code"] for item in json.loads(out)) == ["TW501", "TW502"]


def test_file_level_noqa_is_read_per_file_when_files_alternate():
    from trainwell.lint.suppress import suppressed

    silenced = ["import torch", "# trainwell: noqa: TW502 -- test data", "a = torch.load('a.pt')"]
    loud = ["import torch", "# a comment", "a = torch.load('a.pt')"]
    asked = [(silenced, "TW502"), (loud, "TW502"), (silenced, "TW502"), (silenced, "TW101"), (loud, "TW502")]
    assert [suppressed(lines, 3, code) for lines, code in asked] == [True, False, True, False, False]
    silenced_copy = list(silenced)  # equal lines, another list: read again, the same answer
    assert suppressed(silenced_copy, 3, "TW502") and not suppressed(loud, 3, "TW502")
