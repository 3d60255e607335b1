"""The Trainer's per-step work, counted, never timed: the loss held across the step."""

import torch
from torch import nn

from trainwell.fit.callbacks import Callback
from trainwell.fit.trainer import Trainer

D, C = 4, 3


def data(n, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, D, generator=g), torch.randint(0, C, (n,), generator=g)


def trainer(**kw):
    torch.manual_seed(0)
    args = dict(loss=nn.CrossEntropyLoss(), max_epochs=1, batch_size=8, progress=False,
                device="cpu", log_every=1000)
    args.update(kw)
    return Trainer(nn.Sequential(nn.Linear(D, 8), nn.ReLU(), nn.Linear(8, C)),
                   lambda p: torch.optim.AdamW(p, lr=1e-3), **args)


def test_the_last_loss_is_held_across_the_step_and_dropped_after_fit():
    held = []

    class Look(Callback):
        def on_step_end(self, trainer, state):
            loss = trainer._runner.last_loss
            held.append(loss is not None and loss.grad_fn is not None)

    tr = trainer(callbacks=[Look()])
    tr.fit(data(40))
    assert held == [True] * 5
    assert tr._runner.last_loss is None


def test_a_skipped_loss_is_not_held():
    # Its graph was never run backward: holding it would keep the batch's activations.
    x, y = data(16)
    x[:8] = float("nan")
    tr = trainer(nonfinite="skip", batch_size=8, max_epochs=1)
    tr._runner.micro((x[:8], y[:8]), 1)
    assert tr._runner.last_loss is None
