"""TW202 and TW203: a validation pass missing both `model.eval()` and `no_grad`: Dropout still drops (wrong
results) and every forward records a graph (wasted memory)."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
g = torch.Generator().manual_seed(0)
X, Y = torch.randn(48, 8), torch.randint(0, 2, (48,))
train_loader = DataLoader(TensorDataset(X[:32], Y[:32]), batch_size=8, shuffle=True, generator=g)
val_loader = DataLoader(TensorDataset(X[32:], Y[32:]), batch_size=8)
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Dropout(0.5), nn.Linear(32, 2))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

for epoch in range(3):
    model.train()
    for x, y in train_loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    correct = 0
    for x, y in val_loader:
        out = model(x)  # error: TW202, TW203
        correct += (out.argmax(1) == y).sum().item()
    print(epoch, loss.item(), correct / len(val_loader.dataset))
