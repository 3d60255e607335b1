"""benchmarks/trainer_instructions.py: one epoch's instructions are the difference of two runs, start-up left out."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import trainer_instructions  # noqa: E402


def test_one_epoch_is_the_difference_of_two_runs_over_their_extra_epochs():
    # 10 billion to start PyTorch, then 150 million per epoch: what the two runs cost, in either order
    assert trainer_instructions.per_epoch({6: 10_900_000_000, 2: 10_300_000_000}) == 150_000_000
    found = trainer_instructions._REFS.search("==7== Collected : 1\n==7==\n==7== I   refs:      18,637,365,246\n")
    assert found is not None and int(found.group(1).replace(",", "")) == 18_637_365_246


@pytest.mark.parametrize("argv, says", [
    (["--variants", "trainer"], "must include plain"),
    (["--workloads", "digits,imagenet"], "imagenet"),
    (["--epochs", "3", "1"], "0 < FEW < MANY"),
])
def test_bad_arguments_are_refused_in_one_line(argv, says, capsys):
    assert trainer_instructions.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and says in err and err.count("\n") == 1


def test_a_child_runs_the_variant_it_names(monkeypatch):
    pytest.importorskip("torch")
    import trainer_speed

    ran = []
    monkeypatch.setattr(trainer_speed, "variants", lambda: {"plain": lambda w, model: ran.append((w.name, w.epochs))})
    trainer_instructions.child("plain", "cnn", 3, quick=True)
    assert ran == [("cnn-2conv", 3)]


def test_each_run_is_counted_under_valgrind_with_hashing_fixed(monkeypatch):
    seen = {}

    def fake_run(command, stderr, env, **kwargs):
        seen.update(command=command, env=env)
        stderr.write(b"==1== I   refs:      1,234\n")
        return type("Done", (), {"returncode": 0})()

    monkeypatch.setattr(trainer_instructions.subprocess, "run", fake_run)
    assert trainer_instructions.instructions("trainer", "mlp", 6, quick=True) == 1234
    assert seen["command"][:2] == ["valgrind", "--tool=cachegrind"] and seen["command"][-5:] == ["--child", "trainer", "mlp", "6", "--quick"]
    assert seen["env"]["PYTHONHASHSEED"] == "0"  # else two runs of the same loop differ by a tenth of an epoch
