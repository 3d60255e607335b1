"""Correct: the loader takes its sampler explicitly and the rest of its settings from a `**kwargs` spread, and every
epoch starts with the DistributedSampler's set_epoch(epoch)."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def train(loader_kwargs):
    torch.manual_seed(0)
    X = torch.randn(64, 8)
    dataset = TensorDataset(X, (X[:, 0] > 0).long())
    sampler = DistributedSampler(dataset, num_replicas=2, rank=1)
    loader = DataLoader(dataset, sampler=sampler, **loader_kwargs)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for step, (xb, yb) in enumerate(loader):
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(xb), yb)
            loss.backward()
            optimizer.step()
        print(epoch, loss.item())


if __name__ == "__main__":
    train(dict(batch_size=8, num_workers=0))
