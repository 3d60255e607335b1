# case: static-only
"""Correct: a one-process group (a debug run of DDP code): with world size 1 there is nothing to all-reduce."""
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29533", rank=0, world_size=1)
model = nn.Linear(4, 2)
ddp = DDP(model)
optimizer = torch.optim.SGD(ddp.parameters(), lr=0.1)
for step in range(3):
    optimizer.zero_grad()
    nn.functional.cross_entropy(ddp.module(torch.randn(4, 4)), torch.tensor([0, 1, 0, 1])).backward()
    optimizer.step()
dist.destroy_process_group()
