"""Correct: the split is a NumPy permutation and NumPy's global generator is seeded, so every resumed run cuts
the same validation set (torch itself is not seeded, and the split does not draw from it)."""
import io

import numpy as np
import torch
from torch import nn

np.random.seed(0)
inputs = torch.linspace(-1, 1, 200).unsqueeze(1)
targets = 2 * inputs + 1
order = np.random.permutation(len(inputs))
train_idx, val_idx = order[:160], order[160:]

model = nn.Linear(1, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
checkpoint = io.BytesIO()
torch.save({"model": model.state_dict(), "epoch": 0}, checkpoint)
checkpoint.seek(0)
state = torch.load(checkpoint, weights_only=True)
model.load_state_dict(state["model"])
for epoch in range(state["epoch"], 3):
    optimizer.zero_grad()
    nn.functional.mse_loss(model(inputs[train_idx]), targets[train_idx]).backward()
    optimizer.step()
