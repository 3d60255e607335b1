# case: static-only
"""The same random split, its training part sharded by a DistributedSampler (set_epoch every epoch)."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset, random_split


def main(epochs=3):
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    X = torch.randn(256, 16)
    dataset = TensorDataset(X, (X[:, 0] > 0).long())
    train_set, val_set = random_split(dataset, [224, 32], generator=torch.Generator().manual_seed(0))
    sampler = DistributedSampler(train_set)
    loader = DataLoader(train_set, batch_size=32, sampler=sampler)
    model = DDP(nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
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
