"""TW401: the loader options come from a dict spread with **kwargs, and none of them shuffles."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
use_cuda = torch.cuda.is_available()
kwargs = {"num_workers": 1, "pin_memory": True} if use_cuda else {}
X = torch.randn(32, 8)
y = (torch.arange(32) >= 16).long()  # sorted labels: unshuffled batches are single-class
train_loader = DataLoader(TensorDataset(X, y), batch_size=8, **kwargs)  # error: TW401
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

for epoch in range(3):
    for x, target in train_loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), target)
        loss.backward()
        optimizer.step()
