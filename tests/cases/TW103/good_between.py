"""Clip between backward() and step()."""
import torch
from torch import nn

torch.manual_seed(0)
X = torch.randn(32, 8)
y = X[:, :2].sum(1, keepdim=True)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

for epoch in range(3):
    perm = torch.randperm(len(X))
    for start in range(0, len(X), 8):
        idx = perm[start:start + 8]
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(X[idx]), y[idx])
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        optimizer.step()
    print(epoch, loss.item(), grad_norm.item())
