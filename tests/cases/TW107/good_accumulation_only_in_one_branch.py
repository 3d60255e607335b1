"""Accumulation in one branch (divided), a plain step per batch in the other: neither is unscaled."""
import torch
from torch import nn

ACCUMULATION_STEPS = 2
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
data = [(torch.randn(8, 6), torch.randn(8, 1)) for _ in range(4)]
for epoch in range(2):
    for idx in torch.randperm(len(data)).tolist():
        x, y = data[idx]
        if ACCUMULATION_STEPS > 1:
            loss = nn.functional.mse_loss(model(x), y) / ACCUMULATION_STEPS
            loss.backward()
            if (idx + 1) % ACCUMULATION_STEPS == 0:
                optimizer.step()
                optimizer.zero_grad()
        else:
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
