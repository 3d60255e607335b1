"""A loader over freshly drawn random data, read in one pass: no epoch loop, no order to repeat."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
dataset = TensorDataset(torch.randn(32, 6), torch.randn(32, 1))
loader = DataLoader(dataset, batch_size=8)
model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
for step, (x, y) in enumerate(loader):
    optimizer.zero_grad()
    nn.functional.mse_loss(model(x), y).backward()
    optimizer.step()
