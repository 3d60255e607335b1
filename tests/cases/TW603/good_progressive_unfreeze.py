"""Correct: everything is frozen, the head unfrozen at once and the backbone at epoch 2 (progressive unfreezing)."""
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for param in model.parameters():
    param.requires_grad = False
model[2].requires_grad_(True)
x, y = torch.randn(16, 8), torch.randint(0, 3, (16,))
for epoch in range(4):
    if epoch == 2:
        for param in model[0].parameters():
            param.requires_grad = True
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
