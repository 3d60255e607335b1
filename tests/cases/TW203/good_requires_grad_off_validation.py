"""Validation written before `torch.no_grad()` existed: every parameter is set `requires_grad = False` first, so
the forward passes build no graph; training turns them back on."""
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [(torch.randn(4, 8), torch.randint(0, 2, (4,))) for _ in range(3)]


def validate(net, data):
    for p in net.parameters():
        p.requires_grad = False
    total = 0.0
    for x, y in data:
        total += nn.functional.cross_entropy(net(x), y).item()
    for p in net.parameters():
        p.requires_grad = True
    return total / len(data)


def validate_frozen(net, data):
    net.requires_grad_(False)
    correct = sum((net(x).argmax(1) == y).sum().item() for x, y in data)
    net.requires_grad_(True)
    return correct


for epoch in range(2):
    for x, y in batches:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    print(epoch, validate(model, batches), validate_frozen(model, batches))
