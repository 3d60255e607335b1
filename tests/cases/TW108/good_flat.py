"""The loss keeps its graph; `.item()` is only used for logging."""
import torch
from torch import nn

torch.manual_seed(0)
X = torch.randn(32, 8)
y = (X[:, 0] > 0).long()
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss()

for epoch in range(3):
    perm = torch.randperm(len(X))
    for start in range(0, len(X), 8):
        idx = perm[start:start + 8]
        optimizer.zero_grad()
        loss = criterion(model(X[idx]), y[idx])
        loss.backward()
        optimizer.step()
        logged = loss.item()
    print(epoch, logged)
