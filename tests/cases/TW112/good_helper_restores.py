"""Correct: a load_checkpoint() helper restores the model and the optimizer from the same file."""
import io

import torch
from torch import nn


def load_checkpoint(source, model, optimizer):
    state = torch.load(source, weights_only=True)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    return state["epoch"]


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1))
optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3)
buffer = io.BytesIO()
torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": 3}, buffer)
buffer.seek(0)
start = load_checkpoint(buffer, model, optimizer)
for epoch in range(start, start + 2):
    x = torch.randn(8, 5)
    optimizer.zero_grad()
    nn.functional.mse_loss(model(x), x.sum(1, keepdim=True)).backward()
    optimizer.step()
