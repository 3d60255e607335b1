"""Batches sliced from tensors already in memory; the step is compute-bound."""
import torch
from torch import nn

torch.manual_seed(0)
X = torch.randn(256, 64)
Y = torch.randint(0, 10, (256,))
model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

for epoch in range(2):
    perm = torch.randperm(len(X))
    for start in range(0, len(X), 64):
        idx = perm[start:start + 64]
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(X[idx]), Y[idx])
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
