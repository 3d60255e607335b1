"""Gradients cleared by a helper of the project (`zero_grad(params)`), not by the optimizer."""
import torch
from torch import nn


def zero_grad(params):
    for p in params:
        p.grad = None


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 1))
params = list(model.parameters())
opt = torch.optim.AdamW(params, lr=1e-3)
data = [(torch.randn(8, 6), torch.randn(8, 1)) for _ in range(4)]
for step in range(6):
    x, y = data[step % len(data)]
    zero_grad(params)
    for chunk in range(0, 8, 4):
        loss = nn.functional.mse_loss(model(x[chunk:chunk + 4]), y[chunk:chunk + 4]) / 2
        loss.backward()
    opt.step()
