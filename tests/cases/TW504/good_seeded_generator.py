"""Correct: a seeded torch.Generator drives the initial weights (through the global seed), the data and the loader."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

generator = torch.Generator().manual_seed(7)
torch.manual_seed(7)
data = TensorDataset(torch.randn(48, 6, generator=generator), torch.randint(0, 2, (48,), generator=generator))
loader = DataLoader(data, batch_size=12, shuffle=True, generator=generator)
model = nn.Linear(6, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
