"""Correct: the training loader's kwargs carry drop_last=True; the evaluation loader gets its own kwargs without it."""
import functools

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
train_kwargs = {"batch_size": 16, "shuffle": True, "drop_last": True}
eval_kwargs = {"batch_size": 16}
train_loader = DataLoader(TensorDataset(torch.randn(80, 5), torch.randint(0, 3, (80,))), **train_kwargs)
eval_loader = DataLoader(TensorDataset(torch.randn(45, 5), torch.randint(0, 3, (45,))), **eval_kwargs)
calibrate = functools.partial(DataLoader, batch_size=16, drop_last=True)
model = nn.Sequential(nn.Linear(5, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for epoch in range(2):
    model.train()
    for x, y in train_loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        print(epoch, sum(nn.functional.cross_entropy(model(x), y, reduction="sum").item() for x, y in eval_loader) / 45)
