# case: static-only
"""TW113: a trainer class wraps its model and calls `self.model.module(...)` in its training step (copied from
code that needed the inner module's custom method)."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Trainer:
    def __init__(self, model, loader, local_rank):
        self.model = DDP(model.to(local_rank), device_ids=[local_rank])
        self.loader = loader
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.01)

    def train_step(self, inputs, targets):
        self.optimizer.zero_grad()
        logits = self.model.module(inputs)  # error: TW113
        loss = nn.functional.cross_entropy(logits, targets)
        loss.backward()
        self.optimizer.step()
        return loss.detach()

    def train(self, epochs):
        for epoch in range(epochs):
            for inputs, targets in self.loader:
                self.train_step(inputs, targets)


if __name__ == "__main__":
    dist.init_process_group("nccl")
    rank = int(os.environ["LOCAL_RANK"])
    data = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(10)]
    Trainer(nn.Linear(4, 2), data, rank).train(2)
