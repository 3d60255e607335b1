# case: static-only
"""Correct: a one-process group (world size 1, e.g. a debug run of DDP code): the one rank should read everything."""
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset

dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29533", rank=0, world_size=1)
X = torch.randn(64, 4)
loader = DataLoader(TensorDataset(X, X[:, :1]), batch_size=8, shuffle=True)
model = DDP(nn.Linear(4, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
dist.destroy_process_group()
