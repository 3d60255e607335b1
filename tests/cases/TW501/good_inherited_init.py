"""Subclasses that inherit __init__ (they only override forward) need no super call."""
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        return torch.relu(self.fc(x))


class ResidualBlock(Block):
    def forward(self, x):
        return x + super().forward(x)


class Head(nn.Linear):
    def forward(self, x):
        return super().forward(x).squeeze(-1)


torch.manual_seed(0)
model = nn.Sequential(ResidualBlock(6), ResidualBlock(6), Head(6, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
X = torch.randn(32, 6)
Y = X.sum(1)
for epoch in range(2):
    perm = torch.randperm(32)
    for start in range(0, 32, 8):
        idx = perm[start:start + 8]
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(X[idx]), Y[idx])
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
