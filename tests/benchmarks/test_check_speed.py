"""benchmarks/check_speed.py: the parse floor of a folder reads the files the checker reads, notebooks included."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import check_speed  # noqa: E402


def test_the_floor_of_a_folder_parses_every_file_the_checker_reads(tmp_path, monkeypatch):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "train.py").write_text("x = 1\n")
    (tmp_path / "pkg" / "model.py").write_text("y = 2\n")
    (tmp_path / "explore.ipynb").write_text(json.dumps({"cells": [{"cell_type": "code", "source": ["z = 3\n"]}],
                                                        "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    files = check_speed.checked_files([str(tmp_path)])
    assert sorted(Path(f).name for f in files) == ["explore.ipynb", "model.py", "train.py"]

    parsed = []
    monkeypatch.setattr(ast, "parse", lambda text, filename="<unknown>": parsed.append((Path(filename).name, text)))
    for path in files:
        check_speed._parse_file(path)
    assert sorted(parsed) == [("explore.ipynb", "z = 3\n"), ("model.py", "y = 2\n"), ("train.py", "x = 1\n")]
