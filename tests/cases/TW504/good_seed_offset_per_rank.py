"""Correct: each rank seeds torch with a base seed plus its own offset (the offset is named, the seed is not)."""
import os

import torch
from torch import nn

seed_offset = int(os.environ.get("RANK", "0"))
torch.manual_seed(1337 + seed_offset)
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(32, 4)
for step in range(5):
    optimizer.zero_grad()
    nn.functional.mse_loss(model(x), x[:, :1]).backward()
    optimizer.step()
