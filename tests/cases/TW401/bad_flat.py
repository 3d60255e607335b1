"""TW401: the training DataLoader keeps the default shuffle=False: every epoch sees the same order."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
X = torch.randn(32, 8)
y = (torch.arange(32) >= 16).long()  # sorted labels: unshuffled batches are single-class
train_loader = DataLoader(TensorDataset(X, y), batch_size=8)  # error: TW401
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

for epoch in range(3):
    for x, target in train_loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), target)
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
