# case: runtime-only
"""Correct: the random transform belongs to the training dataset; the validation dataset has a fixed one."""
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Points(Dataset):
    def __init__(self, n, transform, seed):
        g = torch.Generator().manual_seed(seed)
        self.x = torch.randn(n, 4, generator=g)
        self.transform = transform

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.transform(self.x[i]), self.x[i].sum(0, keepdim=True)


def augment(x):
    return x * (1 + 0.1 * torch.randn(()))


def identity(x):
    return x


model = nn.Linear(4, 1)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
train_loader = DataLoader(Points(40, augment, 0), batch_size=8, shuffle=True)
val_loader = DataLoader(Points(16, identity, 1), batch_size=8)
for epoch in range(3):
    for x, y in train_loader:
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    with torch.no_grad():
        val = sum(nn.functional.mse_loss(model(x), y).item() for x, y in val_loader)
