"""TW204: the epoch's statistics live in one tensor and the loss tensor itself is added into its first element:
`stats` joins every step's autograd graph, a chain that grows for the whole epoch."""
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
        stats[0] += loss  # static: TW204  # runtime: TW602
        stats[1] += len(x)
    return (stats[0] / stats[1]).item()


torch.manual_seed(0)
X = torch.randn(32, 6)
Y = X.sum(1, keepdim=True)
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(3):
    print(epoch, train_one_epoch(model, optimizer, X, Y))
