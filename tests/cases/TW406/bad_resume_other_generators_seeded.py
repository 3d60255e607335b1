"""TW406: the script seeds Python's, NumPy's and the CUDA generators, but random_split draws from torch's CPU
generator, which stays unseeded: each resumed run re-draws a different validation set."""
import io
import random

import numpy as np
import torch
from torch import nn
from torch.utils.data import TensorDataset, random_split

random.seed(0)
np.random.seed(0)
torch.cuda.manual_seed_all(0)
data = TensorDataset(torch.linspace(-1, 1, 200).unsqueeze(1), torch.linspace(0, 2, 200).unsqueeze(1))
train_set, val_set = random_split(data, [160, 40])  # error: TW406

model = nn.Linear(1, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
checkpoint = io.BytesIO()
torch.save({"model": model.state_dict(), "epoch": 0}, checkpoint)
checkpoint.seek(0)
state = torch.load(checkpoint, weights_only=True)
model.load_state_dict(state["model"])
x, y = train_set[:]
for epoch in range(state["epoch"], 3):
    optimizer.zero_grad()
    nn.functional.mse_loss(model(x), y).backward()
    optimizer.step()
