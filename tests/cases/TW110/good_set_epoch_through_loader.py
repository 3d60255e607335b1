"""Correct: the epoch is set through the loader (`loader.sampler.set_epoch`) inside a helper."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def start_epoch(loader, epoch):
    if isinstance(loader.sampler, DistributedSampler):
        loader.sampler.set_epoch(epoch)


def main(epochs=3):
    torch.manual_seed(0)
    X = torch.randn(48, 6)
    data = TensorDataset(X, X.sum(1, keepdim=True))
    loader = DataLoader(data, batch_size=6, sampler=DistributedSampler(data, num_replicas=2, rank=1))
    model = nn.Linear(6, 1)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for epoch in range(epochs):
        start_epoch(loader, epoch)
        for x, y in loader:
            optimizer.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()


if __name__ == "__main__":
    main()
