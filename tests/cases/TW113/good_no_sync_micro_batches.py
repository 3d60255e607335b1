# case: static-only
"""Correct: micro-batches run inside `ddp.no_sync()` and the last one goes through the wrapper, so the reducer
all-reduces the accumulated gradients before the step."""
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


def train(ddp, optimizer, batches, accum):
    for step, chunk in enumerate(batches):
        optimizer.zero_grad()
        *micro, last = chunk
        with ddp.no_sync():
            for x, y in micro:
                (nn.functional.mse_loss(ddp.module(x), y) / accum).backward()
        x, y = last
        (nn.functional.mse_loss(ddp(x), y) / accum).backward()
        optimizer.step()


if __name__ == "__main__":
    dist.init_process_group("gloo")
    ddp = DDP(nn.Linear(4, 1))
    data = [[(torch.randn(2, 4), torch.randn(2, 1)) for _ in range(4)] for _ in range(3)]
    train(ddp, torch.optim.SGD(ddp.parameters(), lr=0.1), data, accum=4)
