"""TW101: a hand-written SGD update (no optimizer object) whose `model.zero_grad()` was removed: each update
applies the sum of every earlier batch's gradients."""
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
batches = [(torch.randn(4, 8), torch.randint(0, 2, (4,))) for _ in range(3)]
lr = 0.1


def train_adding(net, data):
    for x, y in data:
        loss = nn.functional.cross_entropy(net(x), y)
        loss.backward()  # error: TW101
        with torch.no_grad():
            for p in net.parameters():
                p.data.add_(p.grad, alpha=-lr)


def train_subtracting(net, data):
    for x, y in data:
        nn.functional.cross_entropy(net(x), y).backward()  # error: TW101
        with torch.no_grad():
            for name, p in net.named_parameters():
                p -= lr * p.grad


for epoch in range(2):
    train_adding(model, batches)
train_subtracting(model, batches)
