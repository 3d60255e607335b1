"""A smoke test trains on the first five samples in one batch of five: with one batch there is no order."""
import torch
from torch import nn
from torch.utils.data import DataLoader, Subset, TensorDataset

torch.manual_seed(0)
full = TensorDataset(torch.randn(40, 6), torch.randint(0, 2, (40,)))
first_five = Subset(full, range(5))
loader = DataLoader(first_five, batch_size=5)
model = nn.Linear(6, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(3):
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
