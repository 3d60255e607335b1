"""benchmarks/trainer_speed.py: a paired ratio compares the two runs of each round, not the best of each variant."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

trainer_speed = pytest.importorskip("trainer_speed")  # imports torch


def test_a_paired_ratio_is_the_median_of_the_rounds_ratios():
    # the machine slowed down after round one: every variant's later runs took twice as long
    rounds = {"plain": [1.0, 2.0, 2.0], "trainer": [1.1, 1.8, 1.8]}
    assert trainer_speed.paired_ratio(rounds, "trainer", "plain") == pytest.approx(2.0 / 1.8)
    assert min(rounds["plain"]) / min(rounds["trainer"]) == pytest.approx(1 / 1.1)  # what the best of each says


def test_the_table_prints_paired_ratios_when_given_the_rounds():
    w = trainer_speed.Workload("tiny", trainer_speed.mlp, (trainer_speed.torch.zeros(64, 1, 28, 28),) * 2, (), 32, 1)
    rounds = {"tiny": {"tutorial": [3.0, 6.0, 6.6], "plain": [1.0, 2.0, 2.2], "trainer": [1.1, 1.8, 2.0],
                       "loader": [1.0, 2.0, 2.2], "named": [1.0, 2.0, 2.2]}}
    medians = {"tiny": {name: sorted(ts)[1] for name, ts in rounds["tiny"].items()}}
    paired = trainer_speed.format_table(medians, [w], rounds).splitlines()
    unpaired = trainer_speed.format_table(medians, [w]).splitlines()
    column = paired[0].split().index("trainer/plain")
    assert paired[1].split()[column] == "1.100x"  # rounds: 0.91x, 1.11x, 1.10x
    assert unpaired[1].split()[column] == "1.111x"  # the medians' ratio: 2.0 s against 1.8 s
    assert paired[1].split()[paired[0].split().index("trainer/tutorial")] == "3.300x"
