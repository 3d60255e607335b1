"""Correct: the validation set holds 64 samples and the batch size is 16: drop_last=True drops nothing."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
val_set = TensorDataset(torch.randn(64, 4), torch.randn(64, 1))
val_loader = DataLoader(val_set, batch_size=16, shuffle=False, drop_last=True)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
train_loader = DataLoader(TensorDataset(torch.randn(48, 4), torch.randn(48, 1)), batch_size=16, shuffle=True)

for epoch in range(2):
    for x, y in train_loader:
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    with torch.no_grad():
        val = sum(nn.functional.mse_loss(model(x), y, reduction="sum").item() for x, y in val_loader) / 64
    print(epoch, val)
