"""A WeightedRandomSampler draws the training order: no shuffle=True needed (or allowed)."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, WeightedRandomSampler

torch.manual_seed(0)
X = torch.randn(32, 8)
y = (torch.arange(32) >= 24).long()
weights = torch.where(y == 1, 3.0, 1.0)
sampler = WeightedRandomSampler(weights, num_samples=len(y), replacement=True,
                                generator=torch.Generator().manual_seed(0))
train_loader = DataLoader(TensorDataset(X, y), batch_size=8, sampler=sampler)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

for epoch in range(3):
    for x, target in train_loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), target)
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
