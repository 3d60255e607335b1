"""Correct: the [16, 1] prediction is squeezed to [16] before MSELoss."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
X = torch.randn(128, 4)
y = X.sum(1)
loader = DataLoader(TensorDataset(X, y), batch_size=16, shuffle=True)
model = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 1))
criterion = nn.MSELoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

for epoch in range(3):
    for xb, yb in loader:
        optimizer.zero_grad()
        loss = criterion(model(xb).squeeze(-1), yb)
        loss.backward()
        optimizer.step()
