"""mean/std from the training split only, applied to both splits."""
import torch
from torch import nn

torch.manual_seed(0)
X = torch.randn(48, 8) * 3 + 1
Y = (X[:, 0] > 1).long()
perm = torch.randperm(len(X))
train_idx, val_idx = perm[:32], perm[32:]
X_train, Y_train, X_val, Y_val = X[train_idx], Y[train_idx], X[val_idx], Y[val_idx]
mean, std = X_train.mean(dim=0), X_train.std(dim=0)
X_train, X_val = (X_train - mean) / std, (X_val - mean) / std

model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
for epoch in range(3):
    model.train()
    order = torch.randperm(32)
    for start in range(0, 32, 8):
        idx = order[start:start + 8]
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(X_train[idx]), Y_train[idx])
        loss.backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        acc = (model(X_val).argmax(1) == Y_val).float().mean().item()
    print(epoch, loss.item(), acc)
