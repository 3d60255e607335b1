"""The light install, built once per session: trainwell's wheel and its base dependencies, offline.

``wheelhouse`` holds trainwell's wheel (built from this tree) and a wheel of
every distribution its base requirements need, repacked from this test
environment (each is pure Python), plus setuptools for an isolated build; pip
installs from it with ``--no-index``, so resolving trainwell's declared
dependencies is pip's own work and needs no network. ``light_env`` is a fresh
virtual environment with that install and nothing else: no torch.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import importlib.metadata as metadata
import io
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
_SKIPPED_METADATA = {"INSTALLER", "REQUESTED", "RECORD", "direct_url.json"}


def run(argv: list[str], timeout: float = 300, input: str | bytes | None = None, text: bool = True, **kwargs) -> subprocess.CompletedProcess:
    """A subprocess in its own process group, its output captured, killed whole on timeout."""
    process = subprocess.Popen(argv, start_new_session=True, stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=text, **kwargs)
    try:
        out, err = process.communicate(input, timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, 9)
        process.communicate()
        raise
    return subprocess.CompletedProcess(argv, process.returncode, out, err)


def requirement_closure(names: list[str]) -> list[metadata.Distribution]:
    """The installed distributions that ``names`` need (no extras), each once."""
    found: dict[str, metadata.Distribution] = {}
    todo = list(names)
    while todo:
        requirement = Requirement(todo.pop())
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        key = canonicalize_name(requirement.name)
        if key in found:
            continue
        found[key] = dist = metadata.distribution(requirement.name)
        todo += dist.requires or []
    return list(found.values())


def repack(dist: metadata.Distribution, folder: Path) -> Path:
    """A wheel of an installed pure-Python distribution: its files as RECORD lists them, a fresh RECORD."""
    assert "Root-Is-Purelib: true" in (dist.read_text("WHEEL") or ""), f"{dist.metadata['Name']} is not pure Python"
    name, version = canonicalize_name(dist.metadata["Name"]).replace("-", "_"), dist.version
    info = next(f for f in dist.files if f.parent.name.endswith(".dist-info")).parent.as_posix()
    target = folder / f"{name}-{version}-py3-none-any.whl"
    rows = []
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as wheel:
        for file in dist.files:
            arcname = file.as_posix()
            if arcname.startswith("..") or "__pycache__" in file.parts or file.parent.as_posix() == info and file.name in _SKIPPED_METADATA:
                continue
            data = Path(dist.locate_file(file)).read_bytes()
            wheel.writestr(arcname, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            rows.append((arcname, f"sha256={digest}", str(len(data))))
        record = io.StringIO()
        csv.writer(record, lineterminator="\n").writerows([*rows, (f"{info}/RECORD", "", "")])
        wheel.writestr(f"{info}/RECORD", record.getvalue())
    return target


def base_requirements() -> list[str]:
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("wheelhouse")
    build = run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q", "-w", str(folder), str(ROOT)],
                cwd=tmp_path_factory.mktemp("build"))
    assert build.returncode == 0, build.stderr
    for dist in requirement_closure([*base_requirements(), "setuptools"]):
        repack(dist, folder)
    return folder


@pytest.fixture(scope="session")
def light_env(wheelhouse, tmp_path_factory) -> Path:
    """A fresh venv with ``pip install trainwell`` from the wheelhouse: the bin folder."""
    venv = tmp_path_factory.mktemp("light") / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], timeout=120).check_returncode()
    # Without PYTHONPATH: a checkout's src/ on it makes pip find trainwell "already satisfied".
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    install = run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q", "--no-index",
                   "--find-links", str(wheelhouse), "trainwell"], env=env)
    assert install.returncode == 0, install.stderr
    return venv / "bin"
