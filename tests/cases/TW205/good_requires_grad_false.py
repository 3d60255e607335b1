"""Freezing done right: requires_grad_(False) and an optimizer over the trainable parameters only."""
import torch
from torch import nn

torch.manual_seed(0)
backbone = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
head = nn.Linear(16, 2)
model = nn.Sequential(backbone, head)
backbone.requires_grad_(False)
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3, weight_decay=0.01)
X, Y = torch.randn(32, 8), torch.randint(0, 2, (32,))

model.train()
for epoch in range(3):
    perm = torch.randperm(len(X))
    for start in range(0, len(X), 8):
        idx = perm[start:start + 8]
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(X[idx]), Y[idx])
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
