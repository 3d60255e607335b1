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
    assert "trainer/tutorial" in table[0] and "trainer/plain" in table[0]
    for row, name in zip(table[1:], ["mlp-784-256-128-10", "cnn-2conv", "digits-default"]):
        cells = row.split()
        assert cells[0] == name
        assert all(float(c.rstrip("x")) > 0 for c in cells[-2:]) and cells[-1].endswith("x")


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
