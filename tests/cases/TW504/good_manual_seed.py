"""Correct: the script seeds torch before it builds the model and the shuffled loader."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(1234)
features = torch.randn(64, 4)
loader = DataLoader(TensorDataset(features, features.sum(1, keepdim=True)), batch_size=16, shuffle=True)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
