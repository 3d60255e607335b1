"""Correct: one pass over the data; there is no second epoch whose order could repeat the first."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

torch.manual_seed(0)
X = torch.randn(32, 4)
data = TensorDataset(X, (X[:, 0] > 0).long())
sampler = DistributedSampler(data, num_replicas=2, rank=0)
loader = DataLoader(data, batch_size=4, sampler=sampler)
model = nn.Linear(4, 2)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
for x, y in loader:
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
print(loss.item())
