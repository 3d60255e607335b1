"""Correct: the [N] target gets its trailing dimension back (`unsqueeze(1)`) to match the [N, 1] output."""
import torch
import torch.nn.functional as F
from torch import nn


def main():
    torch.manual_seed(0)
    x = torch.randn(64, 3)
    y = x.mean(dim=1)
    model = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for step in range(30):
        loss = F.smooth_l1_loss(model(x), y.unsqueeze(1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
