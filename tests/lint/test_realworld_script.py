"""benchmarks/realworld.py on a tiny checkout: the findings it writes for triage, and the measurements it prints."""

from __future__ import annotations

import csv
import importlib.util
import io
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_realworld_writes_every_finding_with_its_checkout_and_commit(tmp_path, monkeypatch, capsys):
    checkout = tmp_path / "someone+project"
    (checkout / "src").mkdir(parents=True)
    (checkout / "src" / "train.py").write_text("import torch\nstate = torch.load('m.pt')\n", encoding="utf-8")
    (checkout / "notes.py").write_text("print('no torch here')\n", encoding="utf-8")
    (tmp_path / "commits.txt").write_text("someone+project 0123abcd\n", encoding="utf-8")
    spec = importlib.util.spec_from_file_location("realworld", ROOT / "benchmarks" / "realworld.py")
    realworld = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(realworld)  # type: ignore[union-attr]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["realworld.py", "--repeats", "1", "--tsv", "-", str(checkout / "src")])
    assert realworld.main() == 0
    captured = capsys.readouterr()
    rows = list(csv.DictReader(io.StringIO(captured.out), delimiter="\t"))
    assert [(r["repo"], r["commit"], r["path"], r["line"], r["code"]) for r in rows] == [
        ("someone+project", "0123abcd", "src/train.py", "2", "TW502")]
    report = captured.err  # the table moves to stderr when the TSV takes stdout
    assert "     1  TW502" in report and "check / parse = " in report and "same findings as the cold run: True" in report
