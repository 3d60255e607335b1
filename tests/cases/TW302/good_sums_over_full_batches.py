"""Loss tensors summed, `/=` and np.mean over a loader with drop_last=True: every batch is full, so the mean of
batch means is the mean over samples. A sum-reduced loss summed per batch is a sum, not a mean."""
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
ds = TensorDataset(torch.randn(30, 8), torch.randint(0, 2, (30,)))
loader = DataLoader(ds, batch_size=8, shuffle=True, drop_last=True, generator=torch.Generator().manual_seed(0))
ragged = DataLoader(ds, batch_size=8)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
criterion = nn.CrossEntropyLoss()
summed = nn.CrossEntropyLoss(reduction="sum")
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
for epoch in range(2):
    total, tensor_total, losses = 0.0, 0.0, []
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item()
        tensor_total += loss.detach()
        losses.append(loss.item())
    total /= len(loader)
    print(epoch, total, tensor_total / len(loader), np.mean(losses))
with torch.no_grad():
    sum_loss = 0.0
    for x, y in ragged:
        sum_loss += summed(model(x), y)
    print(sum_loss / len(ragged.dataset), sum_loss / len(ragged))
