"""Linear probes over a frozen backbone: its features are detached on purpose, and each head of a plain list is called
with `.forward`; the heads are modules with parameters, not data, so the loss keeps its graph through them."""
import torch
from torch import nn

torch.manual_seed(0)
backbone = nn.Sequential(nn.Linear(6, 12), nn.ReLU()).requires_grad_(False)
heads = [nn.Linear(12, 3), nn.Linear(12, 3)]
optimizer = torch.optim.SGD([p for head in heads for p in head.parameters()], lr=0.1)
criterion = nn.CrossEntropyLoss()
x, y = torch.randn(16, 6), torch.randint(0, 3, (16,))
for step in range(3):
    feats = backbone(x).detach()
    optimizer.zero_grad()
    for head in heads:
        loss = criterion(head.forward(feats), y)
        loss.backward()
    optimizer.step()
print(loss.item())
