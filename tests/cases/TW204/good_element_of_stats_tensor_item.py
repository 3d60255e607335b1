"""Correct: the loss is added into the statistics tensor as `loss.item()`, a number, so `stats` carries no graph."""
import torch
from torch import nn


def train_one_epoch(model, optimizer, X, Y, batch_size=8):
    model.train()
    stats = torch.zeros(2)
    for start in range(0, len(X), batch_size):
        x, y = X[start:start + batch_size], Y[start:start + batch_size]
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        stats[0] += loss.item()
        stats[1] += len(x)
    return (stats[0] / stats[1]).item()


torch.manual_seed(0)
X = torch.randn(32, 6)
Y = X.sum(1, keepdim=True)
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(3):
    print(epoch, train_one_epoch(model, optimizer, X, Y))
