# case: static-only
"""TW111: the dataset is chosen per run (synthetic data or the real one), each branch a whole map-style dataset, and
the DDP model's loader has no DistributedSampler: every rank reads all of it."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset


def main(epochs=3, dummy=True):
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    if dummy:
        X = torch.randn(256, 16)
        dataset = TensorDataset(X, (X[:, 0] > 0).long())
    else:
        X = torch.load("features.pt", weights_only=True)
        dataset = TensorDataset(X, (X[:, 0] > 0).long())
    loader = DataLoader(dataset, batch_size=32, shuffle=True)  # error: TW111
    model = DDP(nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
        if rank == 0:
            print(epoch, loss.item())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
