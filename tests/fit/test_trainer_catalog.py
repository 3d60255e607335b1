"""The Trainer cannot commit the resume, many-process, loss and data bugs of the catalog:
one test per class (TW110, TW111, TW112, TW304, TW305, TW405, TW406).

The many-process classes run two real gloo ranks on the CPU: both are started here, in
one new process group, which is killed whole if they do not finish in time.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader

from trainwell.errors import TrainwellError
from trainwell.fit.callbacks import Callback
from trainwell.fit.data import pad_collate
from trainwell.fit.trainer import Trainer

WORKER = Path(__file__).with_name("catalog_worker.py")
N, EPOCHS = 40, 3


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _two_ranks(out: Path, timeout: float = 240) -> dict[int, dict]:
    """Run catalog_worker.py's two gloo ranks; their records by rank. On timeout the run's whole process group dies."""
    proc = subprocess.Popen([sys.executable, str(WORKER), str(out), str(_free_port())], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"the two ranks did not finish in {timeout} s; their process group was killed")
    assert proc.returncode == 0, err[-3000:]
    return {rank: json.loads((out / f"rank{rank}.json").read_text()) for rank in (0, 1)}


@pytest.fixture(scope="module")
def two_rank_records(tmp_path_factory):
    return _two_ranks(tmp_path_factory.mktemp("ranks"))


@pytest.mark.parametrize("feeding", ["tensors", "loader", "sampler"])
def test_tw110_every_epoch_has_a_new_order_on_every_rank(two_rank_records, feeding):
    """TW110: the Trainer's sharded order is seeded per epoch, and a user's DistributedSampler gets set_epoch."""
    for rank in (0, 1):
        epochs = two_rank_records[rank][feeding]
        assert len(epochs) == EPOCHS
        assert all(epochs[i] != epochs[i + 1] for i in range(EPOCHS - 1)), (rank, epochs)


@pytest.mark.parametrize("feeding", ["tensors", "loader", "sampler"])
def test_tw111_the_ranks_share_out_each_epoch(two_rank_records, feeding):
    """TW111: under DDP each rank trains on its own half of the data; together they see it all once."""
    for epoch in range(EPOCHS):
        first, second = (two_rank_records[rank][feeding][epoch] for rank in (0, 1))
        assert len(first) == len(second) == N // 2
        assert not set(first) & set(second)
        assert sorted(first + second) == list(range(N))


class _AtStart(Callback):
    """Notes the optimizer's and the scheduler's state when training starts (after a resume's load)."""

    def __init__(self) -> None:
        self.seen: dict = {}

    def on_fit_start(self, trainer, state) -> None:
        moments = trainer.optimizer.state.get(trainer.model[0].weight, {})
        self.seen = {"moments": {k: v.clone() for k, v in moments.items()},
                     "last_epoch": trainer.scheduler.last_epoch, "lr": trainer.optimizer.param_groups[0]["lr"]}


def _adam_run(run_dir: Path, epochs: int, resume: Path | None = None) -> tuple[Trainer, dict]:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 3))
    g = torch.Generator().manual_seed(2)
    x, y = torch.randn(48, 5, generator=g), torch.randint(0, 3, (48,), generator=g)
    at_start = _AtStart()
    trainer = Trainer(model, lambda p: torch.optim.AdamW(p, lr=1e-2), loss=nn.CrossEntropyLoss(), max_epochs=epochs,
                      batch_size=8, device="cpu", progress=False, run_dir=run_dir, callbacks=[at_start],
                      scheduler=lambda o: torch.optim.lr_scheduler.StepLR(o, 1, 0.5))
    trainer.fit((x, y), resume=resume)
    return trainer, at_start.seen


def test_tw112_a_resume_restores_the_optimizer_moments_and_the_schedule(tmp_path):
    """TW112: when training resumes, AdamW's moments and step count and the scheduler's position are the
    saved ones (not zero, not step 0), and the resumed run ends where an uninterrupted one does."""
    straight, _ = _adam_run(tmp_path / "straight", epochs=3)
    first, fresh = _adam_run(tmp_path / "resumed", epochs=2)
    assert fresh["moments"] == {} and fresh["last_epoch"] == 0  # what a resume that lost them would start from
    saved = {k: v.clone() for k, v in first.optimizer.state[first.model[0].weight].items()}
    resumed, seen = _adam_run(tmp_path / "resumed", epochs=3, resume=tmp_path / "resumed")
    assert int(seen["moments"]["step"]) == int(saved["step"]) == 12
    assert torch.equal(seen["moments"]["exp_avg"], saved["exp_avg"])
    assert torch.equal(seen["moments"]["exp_avg_sq"], saved["exp_avg_sq"])
    assert seen["last_epoch"] == 2 and seen["lr"] == pytest.approx(1e-2 * 0.5**2)
    for name, value in straight.model.state_dict().items():
        assert torch.equal(value, resumed.model.state_dict()[name]), name


@pytest.mark.parametrize("loss", [nn.MSELoss(), nn.L1Loss(), nn.SmoothL1Loss(), nn.HuberLoss(), torch.nn.functional.mse_loss])
def test_tw304_an_elementwise_loss_on_shapes_that_broadcast_is_refused_with_both_shapes(loss):
    """TW304: [N, 1] outputs against [N] targets stop the run at its first step, in one line naming both shapes."""
    x = torch.randn(16, 4)
    trainer = Trainer(nn.Linear(4, 1), lambda p: torch.optim.SGD(p, lr=0.1), loss=loss, max_epochs=1, batch_size=8,
                      device="cpu", progress=False)
    with pytest.raises(TrainwellError) as error:
        trainer.fit((x, x.sum(1)))
    message = str(error.value)
    assert "\n" not in message and "[8, 1]" in message and "[8]" in message and "[8, 8]" in message
    assert trainer.state.step == 0


def test_tw304_equal_shapes_and_other_losses_train():
    """TW304: the refusal is for element-wise losses only: cross-entropy's [N, C] against [N] is its contract."""
    x = torch.randn(16, 4)
    Trainer(nn.Linear(4, 1), lambda p: torch.optim.SGD(p, lr=0.1), loss=nn.MSELoss(), max_epochs=1, batch_size=8,
            device="cpu", progress=False).fit((x, x.sum(1, keepdim=True)))
    result = Trainer(nn.Linear(4, 8), lambda p: torch.optim.SGD(p, lr=0.1), loss=nn.CrossEntropyLoss(), max_epochs=1,
                     batch_size=8, device="cpu", progress=False).fit((x, torch.randint(0, 8, (16,))))
    assert result.history[-1]["step"] == 2


def test_tw305_pad_collate_pads_targets_with_the_index_cross_entropy_ignores():
    """TW305: the Trainer's padding collate gives per-token targets -100 where it pads (inputs keep 0), so a
    CrossEntropyLoss on its batches scores the real tokens only."""
    samples = [(torch.tensor([3, 4, 5]), torch.tensor([1, 2, 1])), (torch.tensor([6]), torch.tensor([2]))]
    batch = pad_collate(samples)
    assert batch["inputs"].tolist() == [[3, 4, 5], [6, 0, 0]]
    assert batch["labels"].tolist() == [[1, 2, 1], [2, -100, -100]]
    dicts = pad_collate([{"input_ids": [1, 2], "labels": [0, 1]}, {"input_ids": [3], "labels": [1]}])
    assert dicts["labels"].tolist() == [[0, 1], [1, -100]]
    logits = torch.randn(2, 3, 4)
    padded = nn.CrossEntropyLoss()(logits.reshape(-1, 4), batch["labels"].reshape(-1))
    real = nn.CrossEntropyLoss()(logits.reshape(-1, 4)[[0, 1, 2, 3]], torch.tensor([1, 2, 1, 2]))
    assert torch.allclose(padded, real)


def test_tw405_the_trainer_evaluates_the_same_data_the_same_way_every_time():
    """TW405: the Trainer adds no randomness to evaluation: no shuffling, no augmentation, eval mode (Dropout
    off), so two evaluations of the same data give the same numbers."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 16), nn.Dropout(0.5), nn.Linear(16, 3))
    x, y = torch.randn(30, 4), torch.randint(0, 3, (30,))
    trainer = Trainer(model, lambda p: torch.optim.SGD(p, lr=0.1), loss=nn.CrossEntropyLoss(), max_epochs=1,
                      batch_size=8, device="cpu", progress=False, metrics={"acc": "accuracy"})
    trainer.fit((x, y))
    loader = DataLoader(list(zip(x, y)), batch_size=7)
    first, second = trainer.evaluate(loader), trainer.evaluate(loader)
    assert first == second and trainer.evaluate((x, y)) == pytest.approx(first, rel=1e-6)


def test_tw406_the_default_split_is_seeded():
    """TW406: `trainwell fit`'s built-in data split is the same in every process and every run, whatever
    the global RNG holds."""
    from trainwell.fit import default

    torch.manual_seed(1)
    (a, _), (va, _) = default.make_data()
    torch.manual_seed(2)
    import numpy as np

    np.random.seed(3)
    (b, _), (vb, _) = default.make_data()
    assert torch.equal(a, b) and torch.equal(va, vb)
