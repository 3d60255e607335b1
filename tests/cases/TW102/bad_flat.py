"""TW102: zero_grad between backward and step wipes the gradients; the step does nothing."""
import torch
from torch import nn

torch.manual_seed(0)
X = torch.randn(32, 8)
y = (X[:, 1] > 0).long()
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for epoch in range(3):
    perm = torch.randperm(len(X))
    for start in range(0, len(X), 8):
        idx = perm[start:start + 8]
        loss = nn.functional.cross_entropy(model(X[idx]), y[idx])
        loss.backward()
        optimizer.zero_grad()  # error: TW102
        optimizer.step()
    print(epoch, loss.item())
