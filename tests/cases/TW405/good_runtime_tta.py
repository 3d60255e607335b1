# case: runtime-only
"""Correct: test-time augmentation on purpose: four random views of every validation batch are averaged."""
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Noisy(Dataset):
    def __init__(self, n, transform=None):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 8, generator=g)
        self.y = (self.x.sum(1) > 0).long()
        self.transform = transform

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


def jitter(x):
    return x + 0.05 * torch.randn_like(x)


model = nn.Linear(8, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
train_loader = DataLoader(Noisy(48), batch_size=8, shuffle=True)
val_loader = DataLoader(Noisy(16, transform=jitter), batch_size=8)
for epoch in range(2):
    for x, y in train_loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(jitter(x)), y).backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        for x, y in val_loader:
            probs = torch.stack([model(jitter(x)).softmax(-1) for _ in range(4)]).mean(0)
    model.train()
