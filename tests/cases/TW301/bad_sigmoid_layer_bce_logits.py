"""TW301: a model that ends in nn.Sigmoid feeds BCEWithLogitsLoss, which applies a sigmoid again."""
import torch
from torch import nn

torch.manual_seed(0)
X = torch.randn(64, 5)
y = (X[:, :1] > 0).float()
model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1), nn.Sigmoid())
criterion = nn.BCEWithLogitsLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(3):
    for i in range(0, 64, 16):
        optimizer.zero_grad()
        loss = criterion(model(X[i:i + 16]), y[i:i + 16])  # error: TW301
        loss.backward()
        optimizer.step()
