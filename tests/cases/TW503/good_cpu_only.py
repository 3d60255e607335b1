"""A CPU-only loop: .item() every step costs no device synchronisation."""
import torch
from torch import nn

torch.manual_seed(0)
X, Y = torch.randn(32, 8), torch.randint(0, 2, (32,))
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

for epoch in range(2):
    running = 0.0
    perm = torch.randperm(32)
    for start in range(0, 32, 8):
        idx = perm[start:start + 8]
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(X[idx]), Y[idx])
        loss.backward()
        optimizer.step()
        running += loss.item() * len(idx)
        print(epoch, start, loss.item())
    print(epoch, running / 32)
