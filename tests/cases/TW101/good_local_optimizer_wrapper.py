"""Correct: a local wrapper sets the learning rate on each step and clears through `zero_grad()`, which clears the
optimizer it wraps; the loop clears it every batch and steps it through the GradScaler."""
import torch
from torch import nn


class NoamOpt:
    def __init__(self, optimizer, warmup):
        self.optimizer = optimizer
        self.warmup = warmup
        self._step = 0

    @property
    def param_groups(self):
        return self.optimizer.param_groups

    def step(self):
        self._step += 1
        for group in self.optimizer.param_groups:
            group["lr"] = min(1.0, self._step / self.warmup)
        self.optimizer.step()

    def zero_grad(self):
        self.optimizer.zero_grad()


torch.manual_seed(0)
model = nn.Linear(8, 1)
optimizer = NoamOpt(torch.optim.Adam(model.parameters(), lr=0), warmup=10)
scaler = torch.amp.GradScaler("cpu", enabled=False)
for x, y in [(torch.randn(4, 8), torch.randn(4, 1)) for _ in range(3)]:
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
