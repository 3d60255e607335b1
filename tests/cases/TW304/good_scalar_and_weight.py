"""Correct: deliberate broadcasting against a per-feature weight and against a scalar."""
import torch
from torch import nn

torch.manual_seed(0)
x = torch.randn(64, 3)
y = x * torch.tensor([1.0, -2.0, 0.5])
weight = torch.ones(3)  # one weight per output feature
model = nn.Linear(3, 3)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(20):
    out = model(x)
    loss = (weight * (out - y) ** 2).mean() + 0.01 * ((out - 0.0) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
