"""Correct: sigmoid followed by BCELoss (not the logits version) is a consistent, if less stable, pairing."""
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1), nn.Sigmoid())
criterion = nn.BCELoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
x = torch.randn(32, 4)
y = (x[:, :1] > 0).float()
for _ in range(5):
    optimizer.zero_grad()
    criterion(model(x), y).backward()
    optimizer.step()
