"""TW205: `module.requires_grad = False` sets a plain attribute on the Module and freezes nothing."""
import torch
from torch import nn

torch.manual_seed(0)
backbone = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
head = nn.Linear(16, 2)
backbone.requires_grad = False  # static: TW205
optimizer = torch.optim.SGD(list(backbone.parameters()) + list(head.parameters()), lr=0.05)
X, Y = torch.randn(32, 8), torch.randint(0, 2, (32,))

for epoch in range(2):
    perm = torch.randperm(len(X))
    for start in range(0, len(X), 8):
        idx = perm[start:start + 8]
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(head(backbone(X[idx])), Y[idx])
        loss.backward()
        optimizer.step()  # runtime: TW205
    print(epoch, loss.item())
