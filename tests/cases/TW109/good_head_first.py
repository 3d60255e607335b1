"""The head is replaced before the optimizer is built."""
import torch
from torch import nn

torch.manual_seed(0)
X = torch.randn(32, 8)
y = torch.randint(0, 3, (32,))
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
model[2] = nn.Linear(16, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for epoch in range(3):
    perm = torch.randperm(len(X))
    for start in range(0, len(X), 8):
        idx = perm[start:start + 8]
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(X[idx]), y[idx])
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
