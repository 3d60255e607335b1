"""Correct: the micro-batch counter runs across epochs, so a window spans the epoch boundary on purpose."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
loader = DataLoader(TensorDataset(torch.randn(30, 8), torch.randn(30, 1)), batch_size=4, shuffle=True)
accumulate = 4
global_step = 0

for epoch in range(2):
    for batch_idx, (x, y) in enumerate(loader):
        loss = nn.functional.mse_loss(model(x), y) / accumulate
        loss.backward()
        global_step += 1
        if global_step % accumulate == 0:
            optimizer.step()
            optimizer.zero_grad()
