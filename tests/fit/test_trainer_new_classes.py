"""The Trainer cannot commit the new catalog classes of issue 20 (TW115, TW306, TW504, TW603): one test each.

TW113/TW114 (the DDP wrapper, replicas) are the Trainer's distributed tests' business: it wraps the model itself
and runs every training forward through the wrapper.
"""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from trainwell.errors import TrainwellError
from trainwell.fit.trainer import Trainer

D, C = 4, 3


def data(n: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, D, generator=g), torch.randint(0, C, (n,), generator=g)


def sgd(params):
    return torch.optim.SGD(params, lr=0.1)


class Recorder(nn.Module):
    """A linear model that records, per training forward, whether gradients were already waiting, and counts
    the samples of each evaluation."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(D, C)
        self.grad_waiting: list[bool] = []
        self.evaluated: list[int] = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.training and torch.is_grad_enabled():
            self.grad_waiting.append(any(p.grad is not None and p.grad.abs().sum() > 0 for p in self.lin.parameters()))
        elif not self.training:
            self.evaluated.append(x.shape[0])
        return self.lin(x)


def trainer(model: nn.Module, **kw) -> Trainer:
    args = dict(loss=nn.CrossEntropyLoss(), max_epochs=2, batch_size=4, progress=False, device="cpu")
    args.update(kw)
    return Trainer(model, args.pop("optimizer", sgd), **args)


def test_tw115_the_last_partial_window_of_every_epoch_steps_and_nothing_leaks_into_the_next():
    """10 batches, accumulate=4: windows 4, 4, 2 per epoch (3 steps), and the first micro-batch of epoch 2 finds
    no gradient left from epoch 1's tail."""
    model = Recorder()
    steps = []
    tr = trainer(model, accumulate=4)
    tr.optimizer.register_step_post_hook(lambda *_: steps.append(len(model.grad_waiting)))
    tr.fit(data(40))
    assert steps == [4, 8, 10, 14, 18, 20]
    assert len(model.grad_waiting) == 20 and model.grad_waiting[10] is False  # epoch 2, first micro-batch
    assert [model.grad_waiting[i] for i in (0, 4, 8, 10, 14, 18)] == [False] * 6  # every window starts clean


@pytest.mark.parametrize("as_loader", [False, True])
def test_tw306_every_evaluation_sees_every_sample(as_loader):
    """50 validation samples in batches of 16: each epoch's evaluation ends on the ragged batch of 2 (no drop_last;
    a preflight forward of one batch may come first)."""
    model = Recorder()
    val = data(50, seed=1)
    if as_loader:
        val = DataLoader(TensorDataset(*val), batch_size=16)
    trainer(model, eval_batch_size=16).fit(data(24), val_data=val)
    assert model.evaluated[-8:] == [16, 16, 16, 2] * 2 and sum(model.evaluated) - sum(model.evaluated[-8:]) <= 16


def test_tw504_a_run_is_seeded_by_the_trainer_whatever_the_global_generator():
    """Same model, same data, global RNG disturbed differently before each run (Dropout and the data order draw
    from it otherwise): the two runs end with bit-equal weights."""
    start = nn.Sequential(nn.Linear(D, 16), nn.Dropout(0.5), nn.Linear(16, C))
    results = []
    for disturbance in (1, 2):
        torch.manual_seed(disturbance)
        model = copy.deepcopy(start)
        trainer(model, seed=7).fit(data(32))
        results.append({k: v.clone() for k, v in model.state_dict().items()})
    assert all(torch.equal(results[0][k], results[1][k]) for k in results[0])


def test_tw603_a_model_with_every_parameter_frozen_is_refused_not_trained():
    """The Trainer builds its optimizer over the parameters that require grad: with none, it says so."""
    model = nn.Linear(D, C).requires_grad_(False)
    with pytest.raises((TrainwellError, ValueError)):
        trainer(model).fit(data(16))
