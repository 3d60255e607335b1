"""The result cache: it never changes results, sees every edit, and survives a corrupt cache."""

from __future__ import annotations

import json
from pathlib import Path

from trainwell.cli import main
from trainwell.lint import runner

BAD = "import torch\nstate = torch.load('m.pt')\n"
GOOD = "import torch\nstate = torch.load('m.pt', weights_only=True)\n"


def _project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\ndependencies = ['torch>=2.1']\n", encoding="utf-8")
    for index in range(3):
        (tmp_path / f"f{index}.py").write_text(BAD if index != 1 else GOOD, encoding="utf-8")
    return tmp_path


def _shape(report: runner.Report) -> list[dict]:
    return [f.to_dict() for f in report.findings] + [vars(p) for p in report.problems]


def test_results_are_equal_with_and_without_the_cache(tmp_path):
    project = _project(tmp_path)
    (project / "broken.py").write_text("import torch\ndef f(:\n", encoding="utf-8")
    fresh = _shape(runner.run([project], cache=False))
    first = _shape(runner.run([project], cache=True))
    second = _shape(runner.run([project], cache=True))
    assert fresh == first == second and len(fresh) == 3
    cache = project / ".trainwell_cache"
    assert (cache / ".gitignore").read_text().endswith("*\n") and (cache / "CACHEDIR.TAG").is_file()


def test_a_hit_does_not_run_the_rules(tmp_path, monkeypatch):
    project = _project(tmp_path)
    runner.run([project], cache=True)
    calls = []
    monkeypatch.setattr(runner, "check_source", lambda *a, **k: calls.append(a[1]) or ([], []))
    runner.run([project], cache=True)
    assert calls == []
    (project / "f1.py").write_text(BAD, encoding="utf-8")  # edited: checked again, and only it
    runner.run([project], cache=True)
    assert calls == [str(project / "f1.py")]


def test_an_edited_file_is_checked_again(tmp_path):
    project = _project(tmp_path)
    assert len(runner.run([project], cache=True).findings) == 2
    (project / "f0.py").write_text(GOOD, encoding="utf-8")
    (project / "f1.py").write_text(BAD + "again = torch.load('n.pt')\n", encoding="utf-8")
    cached = runner.run([project], cache=True)
    assert sorted((Path(f.path).name, f.line) for f in cached.findings) == [("f1.py", 2), ("f1.py", 3), ("f2.py", 2)]
    assert _shape(cached) == _shape(runner.run([project], cache=False))


def test_settings_are_part_of_the_key(tmp_path):
    project = _project(tmp_path)
    assert len(runner.run([project], cache=True).findings) == 2
    assert runner.run([project], cache=True, target_version="2.6").findings == []
    assert runner.run([project], ignore=["TW502"], cache=True).findings == []
    assert len(runner.run([project], cache=True).findings) == 2


def test_a_corrupt_cache_is_ignored(tmp_path):
    project = _project(tmp_path)
    expected = _shape(runner.run([project], cache=True))
    [results] = (project / ".trainwell_cache").rglob("results.json")
    entries = json.loads(results.read_text())
    key = next(iter(entries))
    entries[key]["findings"] = [{"code": "TW999"}]  # an entry that does not decode is a miss
    results.write_text(json.dumps(entries))
    assert _shape(runner.run([project], cache=True)) == expected
    for garbage in ("{not json", "[1, 2]", '{"k": 3}', ""):
        results.write_text(garbage)
        assert _shape(runner.run([project], cache=True)) == expected


def test_an_unwritable_cache_folder_only_costs_time(tmp_path):
    project = _project(tmp_path)
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the cache folder would go", encoding="utf-8")
    assert _shape(runner.run([project], cache=True, cache_dir=blocker / "cache")) == _shape(runner.run([project]))


def test_cli_cache_dir_no_cache_and_config(tmp_path, capsys, monkeypatch):
    project = _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--no-cache", str(project)]) == 1
    assert not (project / ".trainwell_cache").exists()
    assert main(["check", "--cache-dir", str(tmp_path / "elsewhere"), str(project)]) == 1
    assert list((tmp_path / "elsewhere").rglob("results.json"))
    with open(project / "pyproject.toml", "a", encoding="utf-8") as handle:
        handle.write("\n[tool.trainwell]\ncache-dir = 'build/twcache'\n")
    assert main(["check", str(project)]) == 1
    assert list((project / "build" / "twcache").rglob("results.json"))
    capsys.readouterr()


def test_editing_an_imported_file_checks_its_importers_again(tmp_path, monkeypatch):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "pkg" / "helpers.py").write_text("import torch\n\ndef load(p):\n    return torch.load(p, weights_only=True)\n", encoding="utf-8")
    (tmp_path / "train.py").write_text("import torch\nfrom pkg.helpers import (\n    load,\n)\nstate = load('m.pt')\n", encoding="utf-8")
    (tmp_path / "other.py").write_text(GOOD, encoding="utf-8")
    runner.run([tmp_path], cache=True)
    calls = []
    real = runner.check_source
    monkeypatch.setattr(runner, "check_source", lambda *a, **k: calls.append(Path(a[1]).name) or real(*a, **k))
    (tmp_path / "pkg" / "helpers.py").write_text("import torch\n\ndef load(p):\n    return torch.load(p)\n", encoding="utf-8")
    report = runner.run([tmp_path], cache=True)
    assert sorted(calls) == ["helpers.py", "train.py"]
    assert _shape(report) == _shape(runner.run([tmp_path]))


def test_dependency_scan_finds_every_form_of_import(tmp_path):
    from trainwell.lint.dependencies import Dependencies

    names = ["a.py", "b/__init__.py", "b/c.py", "d/e.py", "f.py", "g/__init__.py", "g/h.py", "lone.py", "pkg/__init__.py", "pkg/mod.py"]
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x = 1\n", encoding="utf-8")
    importer = tmp_path / "pkg" / "user.py"
    importer.write_text("import a, b.c as bc\nfrom d import e\nif True: from f import thing\nfrom .. import g\n"
                        "from . import (\n    mod,\n)\n", encoding="utf-8")
    files = [tmp_path / n for n in names] + [importer]
    before = Dependencies(files).digest(importer)
    for name in names:
        original = (tmp_path / name).read_text()
        (tmp_path / name).write_text(original + "y = 2\n", encoding="utf-8")
        changed = Dependencies(files).digest(importer) != before
        assert changed == (name not in ("lone.py", "g/h.py")), name  # g/h.py is never imported: `from .. import g` is g's package
        (tmp_path / name).write_text(original, encoding="utf-8")


def test_a_change_to_the_checker_itself_is_a_miss(tmp_path, monkeypatch):
    """An editable install changes the rules without changing the version: the checker's source is in the key."""
    from trainwell.lint import cache

    project = _project(tmp_path)
    runner.run([project], cache=True)
    calls = []
    real = runner.check_source
    monkeypatch.setattr(runner, "check_source", lambda *a, **k: calls.append(a[1]) or real(*a, **k))
    runner.run([project], cache=True)
    assert calls == []
    monkeypatch.setattr(cache, "_checker_digest", lambda: "a rule changed")
    runner.run([project], cache=True)
    assert len(calls) == 3
