"""`trainwell check --jobs N`: files checked in worker processes, the report byte for byte the
one-process report, and the cache still answering."""

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from trainwell.errors import TrainwellError
from trainwell.lint import runner, workers
from trainwell.report import render

CASES = Path(__file__).resolve().parents[1] / "cases"
HELPER = 'import torch\n\ndef train_one_epoch(model, loader, opt, loss_fn):\n    model.train()\n    for x, y in loader:\n        loss = loss_fn(model(x), y)\n        loss.backward()\n        opt.step()\n'
CALLER = 'import torch\nfrom engine import train_one_epoch\n\nmodel = torch.nn.Linear(2, 2)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nloader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(8, 2), torch.randint(0, 2, (8,))), batch_size=4)\nfor epoch in range(3):\n    train_one_epoch(model, loader, opt, torch.nn.CrossEntropyLoss())\n'  # its loader feeds the loop of engine.py: TW401 only through the index
NOTEBOOK = {"cells": [{"cell_type": "code", "metadata": {}, "source": ["import torch\n", "torch.load('w.pt')\n"],
                       "outputs": [], "execution_count": None}],
            "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


@pytest.fixture
def tree(tmp_path):
    """Bad and good cases of several codes, a helper called across files, a notebook, a file
    that does not parse and one that cannot be decoded."""
    root = tmp_path / "proj"
    root.mkdir()
    for case in sorted(CASES.glob("TW1*/*.py"))[:24]:
        shutil.copy(case, root / f"{case.parent.name}_{case.name}")
    (root / "engine.py").write_text(HELPER)
    (root / "train.py").write_text(CALLER)
    (root / "book.ipynb").write_text(json.dumps(NOTEBOOK))
    (root / "broken.py").write_text("import torch\ndef f(:\n")
    (root / "latin.py").write_bytes(b"import torch\nname = '\xe9'\n")
    return root


def rendered(report):
    out = io.StringIO()
    render(report.findings, report.problems, "text", out, files=report.files)
    return out.getvalue()


def test_two_workers_print_byte_for_byte_what_one_process_prints(tree):
    one = runner.run([tree], jobs=1)
    two = runner.run([tree], jobs=2)
    assert rendered(two) == rendered(one)
    assert [f.to_dict() for f in two.findings] == [f.to_dict() for f in one.findings]
    assert two.problems == one.problems and two.files == one.files == 29 and two.lines == one.lines
    kinds = {p.kind for p in one.problems}
    assert {"syntax-error", "read-error"} <= kinds  # the tree exercises every path
    assert any(f.path.endswith("train.py") and f.code == "TW401" for f in one.findings)
    assert any(f.path.endswith("book.ipynb") for f in one.findings)


def _pid() -> int:
    return os.getpid()


def test_the_files_really_go_to_other_processes_and_come_back_in_order():
    assert set(workers.map_in_order(_pid, (), [()] * 16, 2)) - {os.getpid()}
    assert workers.map_in_order(pow, (2,), [(i,) for i in range(40)], 2) == [2 ** i for i in range(40)]
    assert workers.map_in_order(_pid, (), [()] * 3, 2) == [os.getpid()] * 3  # too few to be worth a pool


def _die() -> None:
    os._exit(3)  # what the OOM killer or a crash in a C extension does to a worker


def test_a_worker_that_dies_is_one_line_saying_how_to_find_the_file():
    with pytest.raises(TrainwellError) as error:
        workers.map_in_order(_die, (), [()] * 8, 2)
    assert "rerun with --jobs 1 to see on which file" in str(error.value) and error.value.exit_code == 1


def test_the_cache_answers_a_parallel_run(tree, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    first = runner.run([tree], jobs=2, cache=True, cache_dir=cache)

    def fails(*args):
        raise AssertionError("checked again although cached")

    monkeypatch.setattr(runner, "_check_or_problem", fails)  # workers fork from here: they would call it
    again = runner.run([tree], jobs=2, cache=True, cache_dir=cache)
    assert rendered(again) == rendered(first)
    (tree / "train.py").write_text(CALLER + "torch.save(model, 'm.pt')\n")
    with pytest.raises(AssertionError, match="checked again"):
        runner.run([tree], jobs=2, cache=True, cache_dir=cache)  # a changed file is checked


def test_the_command_line_takes_jobs_and_refuses_nonsense(tree):
    def check(*args):
        return subprocess.run([sys.executable, "-m", "trainwell", "check", "--no-cache", *args, str(tree)],
                              capture_output=True, text=True, timeout=120)

    one, default = check("--jobs", "1"), check()
    assert one.returncode == default.returncode == 1 and one.stdout == default.stdout and one.stdout
    bad = check("--jobs", "0")
    assert bad.returncode == 2 and "argument --jobs: '0' is not a number of processes; give 1 or more" in bad.stderr


class _Cycle:
    def __init__(self) -> None:
        self.me = self  # freed only by the cyclic collector


def test_an_items_garbage_cycles_are_collected_before_the_next_item_and_the_collector_restored_after():
    import gc
    import weakref

    left: list[weakref.ref] = []

    def item(index: int) -> tuple[bool, int]:
        dead = sum(ref() is None for ref in left)
        kept = _Cycle()
        left.append(weakref.ref(kept))
        return gc.isenabled(), dead

    enabled, frozen = gc.isenabled(), gc.get_freeze_count()
    results = workers.map_in_order(item, (), [(i,) for i in range(3)], jobs=1)
    assert results == [(False, 0), (False, 1), (False, 2)]  # no automatic collection inside; each cycle gone by the next
    assert (gc.isenabled(), gc.get_freeze_count()) == (enabled, frozen)  # the collector as it was
