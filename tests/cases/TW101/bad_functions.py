"""TW101: train_one_epoch never clears gradients; evaluate() is correct."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
g = torch.Generator().manual_seed(0)
train_ds = TensorDataset(torch.randn(32, 8), torch.randint(0, 3, (32,)))
val_ds = TensorDataset(torch.randn(16, 8), torch.randint(0, 3, (16,)))
train_loader = DataLoader(train_ds, batch_size=8, shuffle=True, generator=g)
val_loader = DataLoader(val_ds, batch_size=8)


def train_one_epoch(model, loader, optimizer, criterion):
    model.train()
    for x, target in loader:
        loss = criterion(model(x), target)
        loss.backward()  # error: TW101
        optimizer.step()


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    correct = 0
    for x, target in loader:
        correct += (model(x).argmax(1) == target).sum().item()
    return correct / len(loader.dataset)


model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Dropout(0.1), nn.Linear(16, 3))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.CrossEntropyLoss()
for epoch in range(2):
    train_one_epoch(model, train_loader, optimizer, criterion)
    print(f"epoch {epoch} val acc {evaluate(model, val_loader):.3f}")
