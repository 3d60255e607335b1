# case: static-only
"""TW503: print(loss) formats a CUDA tensor every iteration, which copies it to the host."""
import torch
from torch import nn


def train_one_epoch(model, X, Y, optimizer, device):
    model.train()
    perm = torch.randperm(len(X))
    for step, start in enumerate(range(0, len(X), 32)):
        idx = perm[start:start + 32]
        x, y = X[idx].to(device), Y[idx].to(device)
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        print(step, loss)  # error: TW503


torch.manual_seed(0)
device = torch.device("cuda")
X = torch.randn(256, 16)
model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 1)).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(2):
    train_one_epoch(model, X, X.sum(1, keepdim=True), optimizer, device)
