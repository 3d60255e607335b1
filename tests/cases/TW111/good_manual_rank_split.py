# case: static-only
"""Correct: each rank keeps every world_size-th sample (`dataset[rank::world]`) before building its loader."""
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, Subset, TensorDataset


def worker():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    X = torch.randn(512, 8)
    full = TensorDataset(X, X.sum(1, keepdim=True))
    mine = Subset(full, range(rank, len(full), world))
    loader = DataLoader(mine, batch_size=32, shuffle=True)
    model = DistributedDataParallel(nn.Linear(8, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for epoch in range(3):
        for x, y in loader:
            optimizer.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()


if __name__ == "__main__":
    worker()
