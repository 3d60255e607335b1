"""trainwell's suppressions next to ruff: the documented config keeps them under `ruff --select RUF100 --fix`."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

import pytest

from trainwell.cli import main

SOURCE = textwrap.dedent("""\
    import torch

    state = torch.load("m.pt")  # noqa: TW502
    other = torch.load("o.pt")  # noqa: TW502, E501
    own = torch.load("c.pt")  # trainwell: noqa: TW502 -- a checkpoint we wrote
    # trainwell: noqa: TW101 -- no loop here
""")


@pytest.fixture
def ruff() -> str:
    find = pytest.importorskip("ruff.__main__").find_ruff_bin
    return str(find())


def _ruff_fix(ruff: str, folder: Path) -> str:
    result = subprocess.run([ruff, "check", "--no-cache", "--select", "RUF100", "--fix", "train.py"], cwd=folder,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode in (0, 1), result.stderr
    return (folder / "train.py").read_text(encoding="utf-8")


def test_ruff_keeps_every_documented_suppression_with_external_tw(ruff, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.ruff.lint]\nexternal = ["TW"]\n', encoding="utf-8")
    (tmp_path / "train.py").write_text(SOURCE, encoding="utf-8")
    after = _ruff_fix(ruff, tmp_path)
    assert "# noqa: TW502\n" in after and after.count("TW502") == 3 and "TW101" in after  # only E501 (unused) went
    assert main(["check", "--no-cache", "train.py"]) == 0, capsys.readouterr().out


def test_without_the_config_ruff_strips_a_mixed_noqa_and_the_finding_comes_back(ruff, tmp_path, capsys, monkeypatch):
    """Why the docs ask for ``external``: the fact, on the ruff the tests install."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(SOURCE + 'bare = torch.load("b.pt")  # noqa\n', encoding="utf-8")
    after = _ruff_fix(ruff, tmp_path)
    assert 'other = torch.load("o.pt")\n' in after and 'bare = torch.load("b.pt")\n' in after
    assert "# trainwell: noqa: TW502" in after  # trainwell's own form is no noqa to ruff
    assert main(["check", "--no-cache", "train.py"]) == 1
    out = capsys.readouterr().out
    assert "train.py:4:9: TW502" in out and "train.py:7:8: TW502" in out and ":3:" not in out and ":5:" not in out


def test_an_unknown_code_in_a_trainwell_noqa_is_reported(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(textwrap.dedent("""\
        import torch
        # trainwell: noqa: TW999 -- a typo
        state = torch.load("m.pt", weights_only=True)  # noqa: E501, TW199
        x = 1  # noqa: E501
    """), encoding="utf-8")
    assert main(["check", "--no-cache", "train.py"]) == 1
    out = capsys.readouterr().out
    assert "train.py:2:20: invalid noqa: TW999 in `# trainwell: noqa` is no trainwell code" in out
    column = 'state = torch.load("m.pt", weights_only=True)  # noqa: E501, TW199'.index("TW199") + 1
    assert f"train.py:3:{column}: invalid noqa: TW199 in `# noqa` is no trainwell code" in out
    assert "E501" not in out  # another tool's code is not trainwell's to judge
