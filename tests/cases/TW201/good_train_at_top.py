"""model.train() at the top of train_one_epoch undoes evaluate()'s model.eval()."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def train_one_epoch(model, loader, optimizer):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    return loss.item()


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    total = 0.0
    for x, y in loader:
        total += nn.functional.cross_entropy(model(x), y, reduction="sum").item()
    return total / len(loader.dataset)


torch.manual_seed(0)
g = torch.Generator().manual_seed(0)
X, Y = torch.randn(48, 8), torch.randint(0, 3, (48,))
train_loader = DataLoader(TensorDataset(X[:32], Y[:32]), batch_size=8, shuffle=True, generator=g)
val_loader = DataLoader(TensorDataset(X[32:], Y[32:]), batch_size=8)
model = nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
for epoch in range(3):
    train_loss = train_one_epoch(model, train_loader, optimizer)
    print(epoch, train_loss, evaluate(model, val_loader))
