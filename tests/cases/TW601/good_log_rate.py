"""The model predicts log-rates; PyTorch's poisson_nll_loss(log_input=True) never takes log(0)."""
import torch
from torch import nn


def train_one_epoch(model, X, Y, optimizer):
    model.train()
    perm = torch.randperm(len(X))
    for start in range(0, len(X), 8):
        idx = perm[start:start + 8]
        optimizer.zero_grad()
        loss = nn.functional.poisson_nll_loss(model(X[idx]), Y[idx], log_input=True)
        loss.backward()
        optimizer.step()
    return loss.item()


torch.manual_seed(0)
X = torch.randn(32, 4)
Y = torch.poisson(torch.full((32, 1), 2.0))
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(2):
    print(epoch, train_one_epoch(model, X, Y, optimizer))
