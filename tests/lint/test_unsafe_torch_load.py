"""TW502 and the minimum PyTorch a project declares, wherever it declares it."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainwell.lint import runner
from trainwell.lint.config import declared_in

BARE = "import torch\nstate = torch.load('m.pt')\n"


def _codes(folder: Path) -> list[tuple[str, int]]:
    return [(Path(f.path).name, f.line) for f in runner.run([folder], select=["TW502"]).findings]


@pytest.mark.parametrize("name, text", [
    ("pyproject.toml", "[project]\nname = 'p'\ndependencies = ['numpy', 'torch >= 2.6.0']\n"),
    ("pyproject.toml", "[tool.poetry.dependencies]\ntorch = '^2.7'\n"),
    ("requirements.txt", "numpy\ntorch>=2.6  # the weights_only default\ntorchvision\n"),
    ("requirements-train.txt", "torch[opt]==2.8.1; python_version >= '3.10'\n"),
    ("setup.cfg", "[options]\ninstall_requires =\n    numpy\n    torch>=2.6,<3\n"),
    ("setup.py", "from setuptools import setup\nREQS = ['torch~=2.6']\nsetup(name='p', install_requires=REQS)\n"),
    ("environment.yml", "name: p\ndependencies:\n  - python=3.11\n  - pytorch=2.6.0\n  - pip:\n    - tqdm\n"),
])
def test_a_declared_minimum_of_2_6_silences_the_bare_load(tmp_path, name, text):
    (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "train.py").write_text(BARE, encoding="utf-8")
    assert _codes(tmp_path) == []


@pytest.mark.parametrize("text", ["torch\n", "torch<2.6\n", "torchvision>=0.21\n", "torch>=1.13\n", "# torch>=2.6\n"])
def test_no_minimum_of_2_6_keeps_it(tmp_path, text):
    (tmp_path / "requirements.txt").write_text(text, encoding="utf-8")
    (tmp_path / "train.py").write_text(BARE, encoding="utf-8")
    assert _codes(tmp_path) == [("train.py", 2)]


def test_the_lowest_declared_minimum_wins_and_includes_are_followed(tmp_path):
    (tmp_path / "reqs").mkdir()
    (tmp_path / "reqs" / "base.txt").write_text("torch >=2.1.0, <2.10.0\n", encoding="utf-8")
    (tmp_path / "requirements.txt").write_text("-r reqs/base.txt\n", encoding="utf-8")
    (tmp_path / "environment.yml").write_text("dependencies:\n  - pytorch>=2.7\n", encoding="utf-8")
    assert declared_in(tmp_path) == (True, (2, 1))


def test_each_folder_takes_its_nearest_declaration(tmp_path):
    """A repository of examples, each with its own requirements (as pytorch/examples)."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text("torch>=2.6\n", encoding="utf-8")
    for folder, requirement in (("new", "torch>=2.7\n"), ("old", "torch>=2.0\n"), ("any", "torch\n"), ("plain", "")):
        (tmp_path / folder).mkdir()
        if requirement:
            (tmp_path / folder / "requirements.txt").write_text(requirement, encoding="utf-8")
        (tmp_path / folder / "train.py").write_text(BARE, encoding="utf-8")
    found = sorted((Path(f.path).parent.name, f.line) for f in runner.run([tmp_path], select=["TW502"]).findings)
    assert found == [("any", 2), ("old", 2)]  # "plain" declares nothing: the repository's torch>=2.6 applies


def test_the_walk_stops_at_a_repository_root(tmp_path):
    (tmp_path / "requirements.txt").write_text("torch>=2.6\n", encoding="utf-8")
    (tmp_path / "checkout" / ".git").mkdir(parents=True)
    (tmp_path / "checkout" / "train.py").write_text(BARE, encoding="utf-8")
    assert _codes(tmp_path / "checkout") == [("train.py", 2)]


def test_explicit_target_version_beats_declarations(tmp_path):
    (tmp_path / "requirements.txt").write_text("torch>=2.6\n", encoding="utf-8")
    (tmp_path / "train.py").write_text(BARE, encoding="utf-8")
    assert [f.line for f in runner.run([tmp_path], select=["TW502"], target_version="2.4").findings] == [2]


def test_broken_declaration_files_declare_nothing(tmp_path):
    (tmp_path / "setup.py").write_text("setup(install_requires=[\n", encoding="utf-8")
    (tmp_path / "setup.cfg").write_text("not an ini file [[\n", encoding="utf-8")
    (tmp_path / "requirements.txt").write_bytes(b"torch>=2.6\xff\n")
    (tmp_path / "train.py").write_text(BARE, encoding="utf-8")
    assert _codes(tmp_path) == [("train.py", 2)]


def test_every_fix_of_tw502_is_unsafe():
    from trainwell.catalog import enabled_codes, STATIC

    sources = [BARE, "import torch\nx = torch.load('m.pt', weights_only=False)\n", "import torch\nx = torch.load()\n"]
    fixes = [f.fix for s in sources for f in runner.check_source(s, "t.py", enabled_codes(["TW502"], detector=STATIC))[0]]
    assert len(fixes) == 3 and {fix.applicability for fix in fixes} == {"unsafe"}


def test_why_the_fix_is_unsafe_a_checkpoint_with_a_namespace_no_longer_loads():
    """weights_only=False loads a checkpoint that holds an argparse.Namespace; the fixed call raises on it."""
    import argparse
    import io
    import pickle

    import torch

    from trainwell.lint.fix import apply_fixes

    source = "import torch\nstate = torch.load(BUFFER, weights_only=False)\n"
    findings, _ = runner.check_source(source, "t.py", {"TW502"})
    fixed, count = apply_fixes(source, findings, unsafe=True)
    assert count == 1 and "weights_only=True" in fixed and apply_fixes(source, findings) == (source, 0)
    buffer = io.BytesIO()
    torch.save({"args": argparse.Namespace(lr=0.1)}, buffer)
    buffer.seek(0)
    exec(compile(source, "t.py", "exec"), {"BUFFER": buffer})
    buffer.seek(0)
    with pytest.raises(pickle.UnpicklingError):
        exec(compile(fixed, "t.py", "exec"), {"BUFFER": buffer})


def test_weights_only_none_is_the_default_written_out():
    source = "import torch\nstate = torch.load('m.pt', weights_only=None)\n"
    [finding] = runner.check_source(source, "t.py", {"TW502"}, (2, 4))[0]
    assert finding.fix.applicability == "unsafe" and finding.fix.edits[0].content == "True"
    assert runner.check_source(source, "t.py", {"TW502"}, (2, 6))[0] == []


def test_a_round_trip_in_one_function_is_not_untrusted_but_another_function_s_file_is():
    source = ("import torch\n\ndef test_round_trip(tmp_path, model):\n    path = tmp_path / 'm.pt'\n    torch.save(model, path)\n"
              "    return torch.load(path, weights_only=False)\n\ndef resume(path):\n    return torch.load(path, weights_only=False)\n\n"
              "def load_first(path, model):\n    state = torch.load(path)\n    torch.save(model, path)\n    return state\n")
    assert [f.line for f in runner.check_source(source, "t.py", {"TW502"}, (2, 4))[0]] == [9, 12]


def test_a_name_bound_again_after_the_save_is_not_the_saved_file():
    source = ("import io\nimport torch\n\ndef broadcast(obj, receive):\n    buffer = io.BytesIO()\n    torch.save(obj, buffer)\n"
              "    data = receive(buffer.getvalue())\n    buffer = io.BytesIO(data)\n    return torch.load(buffer)\n")
    assert [f.line for f in runner.check_source(source, "t.py", {"TW502"}, (2, 4))[0]] == [9]


def test_the_saved_file_is_recognised_through_str_and_fspath():
    source = ("import os\nimport torch\n\ndef test_it(tmp_path, model):\n    path = tmp_path / 'm.pt'\n    torch.save(model, path)\n"
              "    a = torch.load(str(path), weights_only=False)\n    b = torch.load(os.fspath(path), weights_only=False)\n"
              "    c = torch.load(str(path) + '.bak', weights_only=False)\n")
    assert [f.line for f in runner.check_source(source, "t.py", {"TW502"}, (2, 4))[0]] == [9]
