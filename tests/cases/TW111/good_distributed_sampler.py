# case: static-only
"""Correct: each rank reads its shard through a DistributedSampler."""
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def main(epochs=3):
    dist.init_process_group("gloo")
    X = torch.randn(256, 16)
    dataset = TensorDataset(X, (X[:, 0] > 0).long())
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=32, sampler=sampler)
    model = DDP(nn.Linear(16, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()


if __name__ == "__main__":
    main()
