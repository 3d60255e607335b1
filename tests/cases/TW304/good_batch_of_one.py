# case: static-only
"""Correct (if slow): a loader without batch_size yields batches of one, where [1, 1] against [1] compares one pair."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

features = torch.randn(100, 4)
loader = DataLoader(TensorDataset(features, features.sum(1)), shuffle=True)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(2):
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y.unsqueeze(0)).backward()
        optimizer.step()
