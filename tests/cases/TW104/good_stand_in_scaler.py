"""Correct: the scaler is a GradScaler when mixed precision is on and a local stand-in with the same methods
otherwise; either way `unscale_` runs before the clip. The stand-in's own methods do not hide the real scaler's."""
import torch
from torch import nn


class DummyGradScaler:
    def scale(self, loss):
        return loss

    def unscale_(self, optimizer):
        pass

    def step(self, optimizer):
        optimizer.step()

    def update(self):
        pass


def train(model, batches, use_amp):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    grad_scaler: torch.amp.GradScaler | DummyGradScaler = torch.amp.GradScaler("cpu", enabled=use_amp)
    if not use_amp:
        grad_scaler = DummyGradScaler()
    for x, y in batches:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        grad_scaler.scale(loss).backward()
        grad_scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        grad_scaler.step(optimizer)
        grad_scaler.update()


torch.manual_seed(0)
train(nn.Linear(8, 1), [(torch.randn(4, 8), torch.randn(4, 1)) for _ in range(3)], use_amp=False)
