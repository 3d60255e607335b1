"""A benchmark: a nested step function returns wall-clock differences (floats) that are summed."""
import time

import torch
from torch import nn


class Bench:
    def __init__(self):
        self.model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 1))
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.01)
        self.time_fn = time.perf_counter
        self.x = torch.randn(16, 8)

    def run(self, iters=5):
        def _step():
            start = self.time_fn()
            self.optimizer.zero_grad()
            self.model(self.x).pow(2).mean().backward()
            self.optimizer.step()
            end = self.time_fn()
            return end - start

        total = 0.0
        for _ in range(iters):
            delta = _step()
            total += delta
        return total / iters


print(Bench().run())
