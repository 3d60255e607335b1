"""Validation loss summed as a tensor inside no_grad: there is no graph to keep."""
import torch
from torch import nn

torch.manual_seed(0)
X = torch.randn(48, 6)
Y = X.sum(1, keepdim=True)
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

for epoch in range(3):
    model.train()
    perm = torch.randperm(32)
    for start in range(0, 32, 8):
        idx = perm[start:start + 8]
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(X[idx]), Y[idx])
        loss.backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        val_total = torch.zeros(())
        for start in range(32, 48, 8):
            val_total += nn.functional.mse_loss(model(X[start:start + 8]), Y[start:start + 8], reduction="sum")
    print(epoch, val_total.item() / 16)
