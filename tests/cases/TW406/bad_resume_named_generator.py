"""TW406: a seeded generator `g` makes the train/val split reproducible, but the val/test split after it is not
given `g`: each resumed run re-draws a different test set."""
import io

import torch
from torch import nn
from torch.utils.data import TensorDataset, random_split

data = TensorDataset(torch.linspace(-1, 1, 200).unsqueeze(1), torch.linspace(0, 2, 200).unsqueeze(1))
g = torch.Generator().manual_seed(0)
train_set, rest = random_split(data, [160, 40], generator=g)
val_set, test_set = random_split(rest, [20, 20])  # error: TW406

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
