"""TW205: backbone.eval() is meant to freeze it, but its weights still get gradients and updates."""
import torch
from torch import nn

torch.manual_seed(0)
backbone = nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.ReLU())
head = nn.Linear(16, 2)
model = nn.Sequential(backbone, head)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
X, Y = torch.randn(32, 8), torch.randint(0, 2, (32,))

model.train()
backbone.eval()  # error: TW205
for epoch in range(3):
    perm = torch.randperm(len(X))
    for start in range(0, len(X), 8):
        idx = perm[start:start + 8]
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(X[idx]), Y[idx])
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
