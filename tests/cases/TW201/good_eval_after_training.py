"""Evaluation only once, after the last epoch."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
g = torch.Generator().manual_seed(0)
X, Y = torch.randn(48, 8), torch.randint(0, 2, (48,))
train_loader = DataLoader(TensorDataset(X[:32], Y[:32]), batch_size=8, shuffle=True, generator=g)
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Dropout(0.3), nn.Linear(32, 2))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

model.train()
for epoch in range(3):
    for x, y in train_loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())

model.eval()
with torch.no_grad():
    accuracy = (model(X[32:]).argmax(1) == Y[32:]).float().mean().item()
print("test accuracy", accuracy)
