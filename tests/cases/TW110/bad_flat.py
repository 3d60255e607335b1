"""TW110: a shuffling DistributedSampler and no set_epoch: every epoch reads the same order."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

torch.manual_seed(0)
X = torch.randn(64, 8)
y = (X[:, 0] > 0).long()
dataset = TensorDataset(X, y)
# num_replicas and rank given: this process reads its half without a process group
sampler = DistributedSampler(dataset, num_replicas=2, rank=0)
loader = DataLoader(dataset, batch_size=8, sampler=sampler)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

for epoch in range(3):
    for xb, yb in loader:  # error: TW110
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(xb), yb)
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
