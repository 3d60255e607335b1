"""The training loader shuffles; the validation loader need not."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def make_loaders(X, Y, batch_size=8):
    train = TensorDataset(X[:32], Y[:32])
    val = TensorDataset(X[32:], Y[32:])
    train_loader = DataLoader(train, batch_size=batch_size, shuffle=True, generator=torch.Generator().manual_seed(0))
    val_loader = DataLoader(val, batch_size=batch_size, shuffle=False)
    return train_loader, val_loader


def train_one_epoch(model, loader, optimizer):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
    return loss.item()


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    return sum(nn.functional.mse_loss(model(x), y, reduction="sum").item() for x, y in loader) / len(loader.dataset)


torch.manual_seed(0)
X = torch.randn(48, 6)
train_loader, val_loader = make_loaders(X, X.sum(1, keepdim=True))
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(2):
    print(epoch, train_one_epoch(model, train_loader, optimizer), evaluate(model, val_loader))
