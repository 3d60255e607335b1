"""TW504: a module-level training script: random weights, a shuffled loader, and no seed anywhere."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

features = torch.linspace(-1, 1, 64).unsqueeze(1)
targets = 3 * features + 0.5
model = nn.Sequential(nn.Linear(1, 8), nn.ReLU(), nn.Linear(8, 1))  # static: TW504
loader = DataLoader(TensorDataset(features, targets), batch_size=16, shuffle=True)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for epoch in range(3):
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
