"""TW108: the loss value is re-wrapped in a fresh tensor: backward() reaches no parameter."""
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
        raw = criterion(model(X[idx]), y[idx])
        loss = torch.tensor(raw.item(), requires_grad=True)
        loss.backward()  # error: TW108
        optimizer.step()
    print(epoch, loss.item())
