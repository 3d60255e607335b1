"""Correct: a loader with drop_last=True feeds a BatchNorm re-estimation pass (train mode, no gradients) after
weight averaging, not a metric: a tiny last batch would only add noise to the running statistics."""
import copy

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
data = TensorDataset(torch.randn(70, 8), torch.randint(0, 2, (70,)))
train_loader = DataLoader(data, batch_size=16, shuffle=True)
calibration_loader = DataLoader(data, batch_size=16, shuffle=True, drop_last=True)
model = nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for epoch in range(2):
    for x, y in train_loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()

averaged = copy.deepcopy(model)
averaged.train()
with torch.no_grad():
    for x, _ in calibration_loader:
        averaged(x)
averaged.eval()
