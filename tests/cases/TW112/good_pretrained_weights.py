# case: static-only
"""Correct: weights loaded straight from a pretrained file to fine-tune with a fresh optimizer (no resume)."""
import torch
from torch import nn

model = nn.Sequential(nn.Linear(10, 32), nn.GELU(), nn.Linear(32, 4))
model.load_state_dict(torch.load("pretrained.pt", weights_only=True))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
for step in range(100):
    x, y = torch.randn(32, 10), torch.randint(0, 4, (32,))
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
