"""The Trainer commits none of the catalog's bugs: the runtime checker finds nothing."""

import pytest
import torch
from torch import nn

from trainwell.runtime import watcher


@pytest.mark.parametrize("precision,accumulate", [("32", 1), ("32", 3), ("bf16-mixed", 2), ("16-mixed", 2)])
def test_runtime_checker_finds_nothing_in_the_trainer(precision, accumulate):
    from trainwell.fit.trainer import Trainer

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Dropout(0.1),
                          nn.Linear(16, 3))
    x, y = torch.randn(64, 4), torch.randint(0, 3, (64,))
    steps = 3 * -(-7 // accumulate)  # 7 batches per epoch, 3 epochs
    trainer = Trainer(model, lambda p: torch.optim.AdamW(p, lr=1e-2), loss=nn.CrossEntropyLoss(),
                      metrics={"acc": "accuracy"}, accumulate=accumulate, precision=precision,
                      scheduler=lambda o: torch.optim.lr_scheduler.OneCycleLR(
                          o, max_lr=1e-2, total_steps=steps),
                      scheduler_interval="step", clip_grad_norm=1.0, max_epochs=3,
                      batch_size=10, progress=False, device="cpu")
    with watcher.watch(select=["TW"]) as w:
        trainer.fit((x, y), val_data=(x, y))
    # GradScaler skips the steps whose scaled gradients overflow (fp16's first steps).
    assert w.steps == steps if precision != "16-mixed" else steps - 3 <= w.steps < steps
    assert [(f.code, f.message) for f in w.findings] == []
