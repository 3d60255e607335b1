# case: static-only
"""TW603: `model.requires_grad_(False)` after the optimizer over the whole model, in a training function."""
import torch
from torch import nn


def train(epochs):
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    model.requires_grad_(False)  # error: TW603
    x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
    for epoch in range(epochs):
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()


if __name__ == "__main__":
    train(2)
