"""Correct: the spread options say shuffle=True, or are completed later with a shuffle the checker cannot read."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
loader_args = dict(batch_size=8, shuffle=True)
extra = {"num_workers": 0}
extra.update({"shuffle": True})
X = torch.randn(32, 8)
y = (torch.arange(32) >= 16).long()
train_loader = DataLoader(TensorDataset(X, y), **loader_args)
other_loader = DataLoader(TensorDataset(X, y), batch_size=8, **extra)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

for epoch in range(3):
    for x, target in train_loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), target).backward()
        optimizer.step()
    for x, target in other_loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), target).backward()
        optimizer.step()
