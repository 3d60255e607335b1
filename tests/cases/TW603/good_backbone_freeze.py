"""Correct: the backbone is frozen and the optimizer holds the head, which stays trainable."""
import torch
from torch import nn

torch.manual_seed(0)
model = nn.ModuleDict({"backbone": nn.Sequential(nn.Linear(8, 16), nn.ReLU()), "head": nn.Linear(16, 3)})
for p in model["backbone"].parameters():
    p.requires_grad = False
model.backbone.requires_grad_(False)
optimizer = torch.optim.SGD(model.head.parameters(), lr=0.1)
x, y = torch.randn(16, 8), torch.randint(0, 3, (16,))
for step in range(5):
    optimizer.zero_grad()
    nn.functional.cross_entropy(model.head(model.backbone(x)), y).backward()
    optimizer.step()
