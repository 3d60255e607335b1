"""The learning rate after each step/epoch equals the schedule's closed form."""

import math

import pytest
import torch
from torch import nn
from torch.optim import lr_scheduler as S

from trainwell.fit.callbacks import Callback
from trainwell.fit.trainer import Trainer

BASE = 0.2


class LRs(Callback):
    def __init__(self):
        self.steps, self.epochs = [], []

    def on_step_end(self, trainer, state):
        self.steps.append(trainer.optimizer.param_groups[0]["lr"])

    def on_epoch_end(self, trainer, state, record):
        self.epochs.append(trainer.optimizer.param_groups[0]["lr"])


def fit(scheduler, interval, epochs=3, accumulate=2, **kw):
    torch.manual_seed(0)
    x, y = torch.randn(40, 3), torch.randint(0, 2, (40,))  # batch 4 -> 10 batches
    rec = LRs()
    trainer = Trainer(nn.Linear(3, 2), lambda p: torch.optim.SGD(p, lr=BASE),
                      loss=nn.CrossEntropyLoss(), scheduler=scheduler, scheduler_interval=interval,
                      max_epochs=epochs, batch_size=4, accumulate=accumulate, progress=False,
                      device="cpu", callbacks=[rec], **kw)
    return trainer, trainer.fit((x, y), val_data=(x, y)), rec


def test_per_step_warmup_counts_optimizer_steps_with_accumulation():
    warm = 4
    _, _, rec = fit(lambda o: S.LambdaLR(o, lambda s: min(1.0, (s + 1) / warm)), "step")
    # 10 batches, accumulate 2 -> 5 optimizer steps per epoch, 15 in all
    assert rec.steps == pytest.approx([BASE * min(1.0, (s + 1) / warm) for s in range(1, 16)])


def test_per_step_cosine_closed_form_with_partial_windows():
    total = 12  # 10 batches, accumulate 3 -> 4 steps per epoch (3,3,3,1), 3 epochs
    _, _, rec = fit(lambda o: S.CosineAnnealingLR(o, T_max=total), "step", accumulate=3)
    expected = [BASE * (1 + math.cos(math.pi * s / total)) / 2 for s in range(1, total + 1)]
    assert rec.steps == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("factory,closed", [
    (lambda o: S.StepLR(o, step_size=2, gamma=0.1), lambda e: BASE * 0.1 ** (e // 2)),
    (lambda o: S.ExponentialLR(o, gamma=0.5), lambda e: BASE * 0.5 ** e),
])
def test_per_epoch_schedulers_step_once_per_epoch(factory, closed):
    _, result, rec = fit(factory, "epoch", epochs=4)
    assert rec.epochs == pytest.approx([closed(e) for e in range(1, 5)])
    # the record's lr is the one used during that epoch
    assert [r["lr"] for r in result.history] == pytest.approx([closed(e) for e in range(4)])
    assert len(set(rec.steps[:5])) == 1  # constant within the first epoch


def test_reduce_on_plateau_is_fed_the_monitored_metric():
    fed = []

    class Spy(S.ReduceLROnPlateau):
        def step(self, metrics, epoch=None):
            fed.append(metrics)
            super().step(metrics)

    _, result, _ = fit(lambda o: Spy(o, mode="max", patience=0), "epoch",
                       metrics={"acc": "accuracy"}, monitor="val_acc", mode="max")
    assert fed == [r["val_acc"] for r in result.history]
