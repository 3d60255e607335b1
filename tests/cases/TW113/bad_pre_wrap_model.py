# case: static-only
"""TW113: the model is wrapped into a new name, the optimizer is built over the wrapper, but the loop still calls
the original `model`: the wrapper never runs a forward, so no gradient is all-reduced."""
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel


def run(rank, world_size):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29511")
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    model = nn.Linear(20, 1)
    wrapped = DistributedDataParallel(model)
    optimizer = torch.optim.Adam(wrapped.parameters(), lr=1e-3)
    generator = torch.Generator().manual_seed(rank)
    for step in range(100):
        x = torch.randn(16, 20, generator=generator)
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), x.sum(1, keepdim=True))  # error: TW113
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(run, args=(2,), nprocs=2)
