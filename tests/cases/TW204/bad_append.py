"""TW204: train_one_epoch appends the loss tensors themselves to a list."""
import torch
from torch import nn


def train_one_epoch(model, X, Y, optimizer, batch_size=8):
    model.train()
    losses = []
    perm = torch.randperm(len(X))
    for start in range(0, len(X), batch_size):
        idx = perm[start:start + batch_size]
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(X[idx]), Y[idx])
        loss.backward()
        optimizer.step()
        losses.append(loss)  # error: TW204
    return torch.stack(losses).max().item()


torch.manual_seed(0)
X = torch.randn(32, 6)
Y = X.sum(1, keepdim=True)
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(3):
    print(epoch, "worst batch loss", train_one_epoch(model, X, Y, optimizer))
