"""Correct: drop_last=True on the loader that feeds training steps (a ragged last batch would upset BatchNorm);
the validation loader keeps every sample."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
train_loader = DataLoader(TensorDataset(torch.randn(90, 8), torch.randint(0, 3, (90,))), batch_size=16, shuffle=True, drop_last=True)
val_loader = DataLoader(TensorDataset(torch.randn(50, 8), torch.randint(0, 3, (50,))), batch_size=16)
model = nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for epoch in range(2):
    model.train()
    for x, y in train_loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        correct = sum((model(x).argmax(1) == y).sum().item() for x, y in val_loader)
    print(epoch, correct / 50)
