"""Correct: 64 samples in batches of 8 make 8 batches, a multiple of the 4 micro-batches of a window."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
features, labels = torch.randn(64, 10), torch.randint(0, 2, (64,))
loader = DataLoader(TensorDataset(features, labels), batch_size=8, shuffle=True)
model = nn.Linear(10, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
ACCUM = 4

for epoch in range(3):
    for i, (x, y) in enumerate(loader):
        (nn.functional.cross_entropy(model(x), y) / ACCUM).backward()
        if (i + 1) % ACCUM == 0:
            optimizer.step()
            optimizer.zero_grad()
