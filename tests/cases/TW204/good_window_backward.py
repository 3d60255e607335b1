"""Losses summed over an accumulation window, with one backward() when the window closes."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
ds = TensorDataset(torch.randn(32, 8), torch.randint(0, 2, (32,)))
loader = DataLoader(ds, batch_size=4, shuffle=True, generator=torch.Generator().manual_seed(0))
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
k = 4

for epoch in range(2):
    window_loss = 0.0
    for i, (x, y) in enumerate(loader):
        window_loss = window_loss + nn.functional.cross_entropy(model(x), y) / k
        if (i + 1) % k == 0:
            optimizer.zero_grad()
            window_loss.backward()
            optimizer.step()
            print(epoch, i, window_loss.item())
            window_loss = 0.0
