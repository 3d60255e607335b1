# case: static-only
"""Correct: a resumable script permutes with a seeded NumPy Generator, so every restart splits the same way."""
import os

import numpy as np
import torch
from torch import nn
from torch.utils.data import Subset, TensorDataset

data = TensorDataset(torch.randn(500, 8), torch.randn(500, 1))
rng = np.random.default_rng(7)
order = rng.permutation(len(data))
train_set, val_set = Subset(data, order[:400].tolist()), Subset(data, order[400:].tolist())
model = nn.Linear(8, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
if os.path.exists("last.pt"):
    state = torch.load("last.pt", weights_only=True)
    model.load_state_dict(state["model"])
for epoch in range(3):
    for x, y in train_set:
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
