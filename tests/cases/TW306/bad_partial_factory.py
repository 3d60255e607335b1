"""TW306: a `functools.partial(DataLoader, ..., drop_last=True)` factory builds both loaders; the test loader is
read by an evaluation function in eval mode."""
import functools

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

make_loader = functools.partial(DataLoader, batch_size=16, drop_last=True)


def evaluate(model, loader):
    model.eval()
    total = 0.0
    with torch.no_grad():
        for x, y in loader:
            total += nn.functional.mse_loss(model(x), y, reduction="sum").item()
    model.train()
    return total


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 8), nn.Dropout(0.1), nn.Linear(8, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    train_loader = make_loader(TensorDataset(torch.randn(64, 3), torch.randn(64, 1)), shuffle=True)
    test_loader = make_loader(TensorDataset(torch.randn(41, 3), torch.randn(41, 1)))  # error: TW306
    for epoch in range(2):
        for x, y in train_loader:
            optimizer.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
        print(epoch, evaluate(model, test_loader) / 41)


if __name__ == "__main__":
    main()
