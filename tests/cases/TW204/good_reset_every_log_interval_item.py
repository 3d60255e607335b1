"""Correct: the running loss adds `loss.item()`, a float, and is reset every `log_interval` steps."""
import torch
from torch import nn

torch.manual_seed(0)
X = torch.randn(64, 6)
Y = X.sum(1, keepdim=True)
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
log_interval = 4
total_loss = 0.0
for step in range(16):
    idx = torch.randint(0, len(X), (8,))
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(X[idx]), Y[idx])
    loss.backward()
    optimizer.step()
    total_loss += loss.item()
    if step % log_interval == 0 and step > 0:
        print(f"step {step}: loss {total_loss / log_interval:.4f}")
        total_loss = 0.0
