"""An IterableDataset stream produces fresh random samples: a DataLoader cannot shuffle it."""
import torch
from torch import nn
from torch.utils.data import DataLoader, IterableDataset


class SyntheticStream(IterableDataset):
    def __init__(self, n, seed):
        self.n = n
        self.seed = seed

    def __iter__(self):
        g = torch.Generator().manual_seed(self.seed)
        for _ in range(self.n):
            x = torch.randn(6, generator=g)
            yield x, x.sum(0, keepdim=True)


def train_one_epoch(model, loader, optimizer):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
    return loss.item()


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(2):
    loader = DataLoader(SyntheticStream(32, seed=epoch), batch_size=8)
    print(epoch, train_one_epoch(model, loader, optimizer))
