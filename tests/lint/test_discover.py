"""The walk of `trainwell check .`: the project's own files, never its virtualenv, build outputs or ignored files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from trainwell.cli import main
from trainwell.lint.discover import discover

BAD_LOAD = "import torch\nstate = torch.load('model.pt')\n"


@pytest.fixture(autouse=True)
def _scratch_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _found(root: Path, **kwargs) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in discover([root], **kwargs))


def test_a_venv_with_any_name_is_skipped_by_its_pyvenv_cfg(tmp_path):
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "env")], check=True)
    _tree(tmp_path, {"train.py": BAD_LOAD, "env/lib/python3.11/site-packages/torch/serialization.py": BAD_LOAD,
                     "conda/conda-meta/history": "", "conda/lib/x.py": BAD_LOAD,
                     "pkg/site-packages/y.py": BAD_LOAD, "__pypackages__/3.11/lib/z.py": BAD_LOAD,
                     "web/node_modules/w.py": BAD_LOAD, "build/lib/b.py": BAD_LOAD, "dist/d.py": BAD_LOAD,
                     ".tox/py311/t.py": BAD_LOAD, "src/model.py": BAD_LOAD})
    assert _found(tmp_path) == ["src/model.py", "train.py"]


def test_gitignore_and_ignore_files_are_honoured_with_git_semantics(tmp_path):
    (tmp_path / ".git").mkdir()
    _tree(tmp_path, {
        ".gitignore": "env/\n*_generated.py\nlogs\n!keep_generated.py\n",
        ".ignore": "scratch.py\n",
        "src/.gitignore": "/local.py\n",  # anchored to src/
        "env/lib/a.py": BAD_LOAD, "a_generated.py": BAD_LOAD, "keep_generated.py": BAD_LOAD, "logs/l.py": BAD_LOAD,
        "scratch.py": BAD_LOAD, "src/local.py": BAD_LOAD, "src/sub/local.py": BAD_LOAD, "train.py": BAD_LOAD,
    })
    assert _found(tmp_path) == ["keep_generated.py", "src/sub/local.py", "train.py"]
    everything = _found(tmp_path, respect_gitignore=False)
    assert "env/lib/a.py" in everything and "src/local.py" in everything and len(everything) == 8


def test_ignore_files_above_the_searched_folder_count_up_to_the_repository_root(tmp_path):
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    _tree(tmp_path, {".gitignore": "*.py\n",  # outside the repository: not this project's
                     "repo/.gitignore": "src/gen/\n", "repo/src/gen/g.py": BAD_LOAD, "repo/src/train.py": BAD_LOAD})
    src = tmp_path / "repo" / "src"
    assert _found(src) == ["train.py"]


def test_a_named_file_is_checked_even_when_ignored(tmp_path, capsys):
    _tree(tmp_path, {".gitignore": "gen.py\n", "gen.py": BAD_LOAD})
    assert main(["check", "--no-cache", "gen.py"]) == 1
    assert "TW502" in capsys.readouterr().out


def test_nothing_to_check_is_said_on_stderr_and_fails(tmp_path, capsys):
    _tree(tmp_path, {".gitignore": "*.py\n", "a.py": BAD_LOAD, "empty/README.md": "x"})
    for target in ("empty", "."):
        code = main(["check", "--no-cache", target])
        out, err = capsys.readouterr()
        assert code == 2 and out == "" and err.startswith("trainwell: warning: No Python files found in ") and err.count("\n") == 1
    assert main(["check", "--no-cache", "--no-respect-gitignore", "."]) == 1


def test_the_summary_counts_files_with_findings_and_files_checked(tmp_path, capsys):
    _tree(tmp_path, {"a.py": BAD_LOAD, "b.py": BAD_LOAD + "other = torch.load('o.pt')\n", "clean.py": "x = 1\n"})
    for name in ("u1.py", "u2.py", "u3.py"):
        (tmp_path / name).write_bytes(b"import torch\nx = '\xff'\n")
    assert main(["check", "--no-cache", "a.py", "b.py", "clean.py"]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == "3 findings in 2 of 3 files: 0 fixable with --fix (3 more with --unsafe-fixes)."
    assert main(["check", "--no-cache", "u1.py", "u2.py", "u3.py"]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == "0 findings, 3 file errors in 3 files."
    assert main(["check", "--no-cache", "clean.py"]) == 0
    assert capsys.readouterr().out == "All clear in 1 file.\n"


def test_stdin_is_checked_as_the_named_file(tmp_path, capsys, monkeypatch):
    import io

    _tree(tmp_path, {"pkg/pyproject.toml": '[tool.trainwell]\ntarget-version = "2.6"\n'})
    monkeypatch.setattr(sys, "stdin", io.StringIO(BAD_LOAD + "x = torch.load('x', weights_only=False)\n"))
    assert main(["check", "-", "--stdin-filename", "pkg/train.py"]) == 1  # the file need not exist
    out = capsys.readouterr().out
    assert out.startswith("pkg/train.py:3:5: TW502 ") and "pkg/train.py:2" not in out  # pkg's config (torch 2.6) applies
    for argv in (["-"], ["-", "a.py", "--stdin-filename", "a.py"], ["a.py", "--stdin-filename", "a.py"],
                 ["-", "--stdin-filename", "a.py", "--fix"]):
        assert main(["check", *argv]) == 2
        assert capsys.readouterr().err.count("\n") == 1
