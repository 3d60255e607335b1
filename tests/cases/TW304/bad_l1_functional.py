"""TW304: F.l1_loss between [64] outputs (squeezed) and [64, 1] targets (keepdim): a [64, 64] grid."""
import torch
import torch.nn.functional as F
from torch import nn


def train(model, x, y, steps=30):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for step in range(steps):
        out = model(x).squeeze(-1)
        loss = F.l1_loss(out, y)  # static: TW304
        optimizer.zero_grad()
        loss.backward()  # runtime: TW304
        optimizer.step()
    return loss.item()


def main():
    torch.manual_seed(0)
    x = torch.randn(64, 3)
    y = x.mean(dim=1, keepdim=True)
    print(train(nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 1)), x, y))


if __name__ == "__main__":
    main()
