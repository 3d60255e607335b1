"""benchmarks/trainer_speed.py: its quick mode runs every variant and prints the ratios."""

import importlib.util
import re
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "trainer_speed.py"


def load_benchmark():
    spec = importlib.util.spec_from_file_location("trainer_speed", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def test_quick_run_prints_samples_per_second_and_ratios(capsys):
    bench = load_benchmark()
    assert bench.main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert re.match(r"torch \S+, \d+ threads, AdamW .+, median of 1", out)
    table = out.splitlines()[-4:]
    assert table[0].split()[:3] == ["workload", "batch", "samples"]
    head = table[0].split()
    for ratio in ("trainer/tutorial", "trainer/plain", "loader/plain", "named/tutorial", "named/plain"):
        assert ratio in head
    assert head[-2:] == ["trainer_us/step", "loader_us/step"]
    ratios = [i for i, h in enumerate(head) if "/" in h and not h.endswith("/s") and "us" not in h]
    for row, name in zip(table[1:], ["mlp-784-256-128-10", "cnn-2conv", "digits-default"]):
        cells = row.split()
        assert cells[0] == name and len(cells) == len(head)
        assert all(cells[i].endswith("x") and float(cells[i].rstrip("x")) > 0 for i in ratios)
        float(cells[-1]), float(cells[-2])  # the Trainer's microseconds per step over the plain loop


def test_variants_train_the_same_model_the_same_amount(monkeypatch):
    """Every variant runs the optimizer once per batch over every epoch."""
    import torch

    bench = load_benchmark()
    w = bench.workloads(quick=True)[1]
    steps = {}
    original = torch.optim.AdamW.step
    for name, fn in bench.variants().items():
        count = [0]

        def counting(self, *args, _count=count, **kwargs):
            _count[0] += 1
            return original(self, *args, **kwargs)

        monkeypatch.setattr(torch.optim.AdamW, "step", counting)
        bench.time_once(fn, w)
        steps[name] = count[0]
    expected = -(-len(w.train[0]) // w.batch_size) * w.epochs
    assert steps == {name: expected for name in steps}
