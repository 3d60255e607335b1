"""Correct: a DistributedSampler with shuffle=False has no order to vary (evaluation-style sharding)."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

torch.manual_seed(0)
X = torch.randn(32, 4)
data = TensorDataset(X, X[:, :1] * 2)
loader = DataLoader(data, batch_size=4, sampler=DistributedSampler(data, num_replicas=2, rank=0, shuffle=False))
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
