"""A @torch.no_grad()-decorated evaluate() helper."""
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
    correct = 0
    for x, y in loader:
        logits = model(x)
        correct += (logits.argmax(1) == y).sum().item()
    return correct / len(loader.dataset)


torch.manual_seed(0)
g = torch.Generator().manual_seed(0)
X, Y = torch.randn(48, 8), torch.randint(0, 3, (48,))
train_loader = DataLoader(TensorDataset(X[:32], Y[:32]), batch_size=8, shuffle=True, generator=g)
val_loader = DataLoader(TensorDataset(X[32:], Y[32:]), batch_size=8)
model = nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
for epoch in range(3):
    print(epoch, train_one_epoch(model, train_loader, optimizer), evaluate(model, val_loader))
