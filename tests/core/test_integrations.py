"""pre-commit and the GitHub Action as written: the README's snippet from a fresh clone, the action's own scripts."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from .conftest import ROOT, run

BAD_LOAD = "import torch\nstate = torch.load('model.pt')\n"
NOTEBOOK = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": ["# train\n"]},
                      {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": BAD_LOAD.splitlines(True)}],
            "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def _git(folder: Path, *argv: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(["git", "-C", str(folder), *argv], check=True, capture_output=True, text=True, env=env).stdout.strip()


@pytest.fixture(scope="session")
def clone(tmp_path_factory) -> tuple[Path, str]:
    """This tree as a fresh clone has it, and its commit."""
    target = tmp_path_factory.mktemp("clone") / "trainwell"
    return target, _fresh_clone(target)


def _fresh_clone(target: Path) -> str:
    """This tree as a fresh clone would have it (tracked and new files, uncommitted edits included), committed; its hash."""
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            check=True, capture_output=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_symlink() or source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name, follow_symlinks=False)
    _git(target, "init", "-q")
    _git(target, "add", "-A")
    _git(target, "commit", "-q", "-m", "snapshot")
    return _git(target, "rev-parse", "HEAD")


def _project(folder: Path) -> Path:
    folder.mkdir()
    (folder / "train.py").write_text(BAD_LOAD, encoding="utf-8")
    (folder / "train.ipynb").write_text(json.dumps(NOTEBOOK, indent=1), encoding="utf-8")
    (folder / "fixtures").mkdir()
    (folder / "fixtures" / "buggy.py").write_text(BAD_LOAD, encoding="utf-8")
    (folder / "pyproject.toml").write_text('[tool.trainwell]\nexclude = ["fixtures"]\n', encoding="utf-8")
    return folder


def _offline(wheelhouse: Path) -> dict[str, str]:
    """pip resolving from the wheelhouse only; this interpreter first on PATH."""
    return {**os.environ, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheelhouse), "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}


def test_the_readme_pre_commit_snippet_runs_from_a_fresh_clone(wheelhouse: Path, clone: tuple[Path, str], tmp_path: Path) -> None:
    pytest.importorskip("pre_commit")
    clone, commit = clone
    snippet = re.search(r"```yaml\n(repos:\n.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S).group(1)
    assert "<this repository's URL>" in snippet and "<commit hash>" in snippet
    project = _project(tmp_path / "project")
    (project / ".pre-commit-config.yaml").write_text(snippet.replace("<this repository's URL>", str(clone)).replace("<commit hash>", commit),
                                                   encoding="utf-8")
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    home = tmp_path / "pre-commit-home"
    env = {**_offline(wheelhouse), "PRE_COMMIT_HOME": str(home), "VIRTUALENV_OFFLINE": "1"}
    result = run([sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never"], cwd=project, env=env, timeout=400)
    out = result.stdout + result.stderr
    assert result.returncode == 1, out
    assert "train.py:2:9: TW502" in out and "train.ipynb:cell 2:2:9: TW502" in out and "fixtures" not in out, out
    environments = list(home.glob("repo*/py_env-*"))
    assert environments and not list(environments[0].glob("lib/*/site-packages/torch")), environments
    assert list(environments[0].glob("lib/*/site-packages/pathspec"))  # the light package's own dependency is there

    (project / "train.py").write_text("x = 1\n", encoding="utf-8")
    (project / "train.ipynb").unlink()
    _git(project, "add", "-A")
    clean = run([sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never"], cwd=project, env=env, timeout=400)
    assert clean.returncode == 0, clean.stdout


def _expression(text: str, inputs: dict[str, str], outputs: dict[str, dict[str, str]], action_path: Path) -> str:
    """The few expressions the action's env values use: inputs, github.action_path, steps.<id>.outputs."""
    def value(match: re.Match[str]) -> str:
        parts = match.group(1).split(".")
        if parts[0] == "inputs":
            return inputs[parts[1]]
        if parts == ["github", "action_path"]:
            return str(action_path)
        if parts[0] == "steps" and parts[2] == "outputs":
            return outputs.get(parts[1], {}).get(parts[3], "")
        raise AssertionError(f"an expression the test does not know: {match.group(0)}")

    return re.sub(r"\$\{\{\s*([\w.-]+)\s*\}\}", value, str(text))


def _run_action(action_path: Path, given: dict[str, str], workspace: Path, runner_temp: Path, env: dict[str, str]) -> tuple[int, dict]:
    """The composite action's `run` steps as the runner runs them: env, GITHUB_OUTPUT, GITHUB_PATH; `uses` steps returned."""
    action = yaml.safe_load((action_path / "action.yml").read_text(encoding="utf-8"))
    inputs = {name: given.get(name, spec.get("default", "")) for name, spec in action["inputs"].items()}
    outputs: dict[str, dict[str, str]] = {}
    path_file, extra_path = runner_temp / "path.txt", []
    used, log = {}, ""
    for index, step in enumerate(action["runs"]["steps"]):
        if "uses" in step:
            used[step["uses"]] = {k: _expression(v, inputs, outputs, action_path) for k, v in step.get("with", {}).items()}
            continue
        output_file = runner_temp / f"output-{index}.txt"
        output_file.write_text("")
        step_env = {**env, **{k: _expression(v, inputs, outputs, action_path) for k, v in step.get("env", {}).items()},
                    "GITHUB_OUTPUT": str(output_file), "GITHUB_PATH": str(path_file), "RUNNER_TEMP": str(runner_temp),
                    "PATH": os.pathsep.join([*extra_path, env["PATH"]])}
        result = run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=workspace, env=step_env, timeout=300)
        log += result.stdout + result.stderr
        if "id" in step:
            outputs[step["id"]] = dict(line.split("=", 1) for line in output_file.read_text().splitlines() if "=" in line)
        if path_file.exists():
            extra_path = list(reversed(path_file.read_text().split()))
        if result.returncode:
            return result.returncode, {"used": used, "outputs": outputs, "log": log}
    return 0, {"used": used, "outputs": outputs, "log": log}


def test_the_github_action_installs_light_checks_and_writes_sarif(wheelhouse: Path, clone: tuple[Path, str], tmp_path: Path) -> None:
    """From a fresh clone, as GitHub checks the action out: its default install builds the light package from it."""
    action_path = clone[0]
    action = yaml.safe_load((action_path / "action.yml").read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite" and all(spec.get("description") for spec in action["inputs"].values())
    project = _project(tmp_path / "project")
    (tmp_path / "temp").mkdir()
    code, state = _run_action(action_path, {}, project, tmp_path / "temp", _offline(wheelhouse))
    assert code == 1 and state["outputs"]["check"]["exit-code"] == "1", state
    sarif = json.loads((project / "trainwell.sarif").read_text(encoding="utf-8"))
    uris = sorted(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in sarif["runs"][0]["results"])
    assert uris == ["train.ipynb", "train.py"]  # fixtures/ excluded by the project's config
    assert state["used"]["github/codeql-action/upload-sarif@v3"]["sarif_file"] == "trainwell.sarif"
    assert "::error file=train.py,line=2" in state["log"]
    venv = tmp_path / "temp" / "trainwell-venv"
    assert not list(venv.glob("lib/*/site-packages/torch")) and list(venv.glob("lib/*/site-packages/trainwell"))

    (project / "train.py").write_text("x = 1\n", encoding="utf-8")
    (project / "train.ipynb").unlink()
    wheel = next(wheelhouse.glob("trainwell-*.whl"))  # the `install` input: here the built wheel
    code, state = _run_action(action_path, {"install": str(wheel), "args": "--select TW5"}, project, tmp_path / "temp", _offline(wheelhouse))
    assert code == 0 and state["outputs"]["check"]["exit-code"] == "0", state
