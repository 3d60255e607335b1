"""Validation every 2 steps inside the batch loop, then back to train mode."""
import torch
from torch import nn

torch.manual_seed(0)
X, Y = torch.randn(48, 8), torch.randn(48, 1)
X_val, Y_val = X[32:], Y[32:]
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Dropout(0.1), nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

model.train()
for epoch in range(2):
    perm = torch.randperm(32)
    for step, start in enumerate(range(0, 32, 8)):
        idx = perm[start:start + 8]
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(X[idx]), Y[idx])
        loss.backward()
        optimizer.step()
        if step % 2 == 1:
            model.eval()
            with torch.no_grad():
                val_loss = nn.functional.mse_loss(model(X_val), Y_val).item()
            model.train()
            print(epoch, step, loss.item(), val_loss)
