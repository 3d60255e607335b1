"""TW504: a `main()` behind the __main__ guard builds a model class with Dropout and trains it, never seeding."""
import argparse

import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(10, hidden), nn.ReLU(), nn.Dropout(0.2), nn.Linear(hidden, 2))

    def forward(self, x):
        return self.body(x)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hidden", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args([])
    data = [(torch.ones(8, 10) * i, torch.tensor([i % 2] * 8)) for i in range(4)]
    model = Net(args.hidden)  # static: TW504
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(args.epochs):
        for x, y in data:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()


if __name__ == "__main__":
    main()
