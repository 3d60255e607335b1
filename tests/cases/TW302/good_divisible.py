"""32 samples in batches of 8: all batches are full, so dividing by len(loader) is exact."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    acc_sum = 0.0
    for x, y in loader:
        acc_sum += (model(x).argmax(1) == y).float().mean().item()
    return acc_sum / len(loader)


torch.manual_seed(0)
g = torch.Generator().manual_seed(0)
X, Y = torch.randn(64, 8), torch.randint(0, 3, (64,))
train_loader = DataLoader(TensorDataset(X[:32], Y[:32]), batch_size=8, shuffle=True, generator=g)
val_loader = DataLoader(TensorDataset(X[32:], Y[32:]), batch_size=8)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(2):
    model.train()
    for x, y in train_loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    print(epoch, evaluate(model, val_loader))
