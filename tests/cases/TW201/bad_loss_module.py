"""Validation leaves the model in eval mode; the loss is an nn.Module (which stays in train mode)."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
data = TensorDataset(torch.randn(48, 8), torch.randint(0, 2, (48,)))
train_loader = DataLoader(data, batch_size=8, shuffle=True, generator=torch.Generator().manual_seed(0))
val_loader = DataLoader(data, batch_size=16)
model = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.2), nn.Linear(16, 2))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

model.train()
for epoch in range(3):
    for x, y in train_loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
    model.eval()  # error: TW201
    with torch.no_grad():
        correct = sum((model(x).argmax(1) == y).sum().item() for x, y in val_loader)
    print(epoch, correct / len(data))
