"""Correct: set_epoch(epoch) on the sampler at the top of every epoch."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

torch.manual_seed(0)
X = torch.randn(64, 8)
y = (X[:, 0] > 0).long()
dataset = TensorDataset(X, y)
sampler = DistributedSampler(dataset, num_replicas=2, rank=0)
loader = DataLoader(dataset, batch_size=8, sampler=sampler)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

for epoch in range(3):
    sampler.set_epoch(epoch)
    for xb, yb in loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(xb), yb)
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
