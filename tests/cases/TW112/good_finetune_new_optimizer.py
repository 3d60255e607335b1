"""Correct: pretrained weights are loaded and fine-tuned with a fresh optimizer on purpose (no resume)."""
import io

import torch
from torch import nn

torch.manual_seed(0)
backbone = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
pretrained = io.BytesIO()
torch.save(backbone.state_dict(), pretrained)
pretrained.seek(0)

model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
state = torch.load(pretrained, weights_only=True)
model.load_state_dict({k: v for k, v in state.items()}, strict=False)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
for epoch in range(3):
    x, y = torch.randn(16, 8), torch.randint(0, 2, (16,))
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
