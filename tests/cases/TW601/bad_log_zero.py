"""TW601: a Poisson loss on ReLU rates takes log(0) = -inf as soon as one rate is zero."""
import torch
from torch import nn


def poisson_loss(rate, counts):
    return (rate - counts * torch.log(rate)).mean()


def train_one_epoch(model, X, Y, optimizer):
    model.train()
    perm = torch.randperm(len(X))
    for start in range(0, len(X), 8):
        idx = perm[start:start + 8]
        optimizer.zero_grad()
        loss = poisson_loss(model(X[idx]), Y[idx])
        loss.backward()  # runtime: TW601
        optimizer.step()
    return loss.item()


torch.manual_seed(0)
X = torch.randn(32, 4)
Y = torch.poisson(torch.full((32, 1), 2.0))
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1), nn.ReLU())
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(2):
    print(epoch, train_one_epoch(model, X, Y, optimizer))
