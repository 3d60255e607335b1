"""Hand-written SGD updates that clear the gradients every step: `model.zero_grad()` before backward, or each
parameter's `.grad` cleared right after its update."""
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
batches = [(torch.randn(4, 8), torch.randint(0, 2, (4,))) for _ in range(3)]
lr = 0.1


def train_adding(net, data):
    for x, y in data:
        net.zero_grad()
        loss = nn.functional.cross_entropy(net(x), y)
        loss.backward()
        with torch.no_grad():
            for p in net.parameters():
                p.data.add_(p.grad, alpha=-lr)


def train_subtracting(net, data):
    for x, y in data:
        nn.functional.cross_entropy(net(x), y).backward()
        with torch.no_grad():
            for p in net.parameters():
                p -= lr * p.grad
                p.grad = None


for epoch in range(2):
    train_adding(model, batches)
train_subtracting(model, batches)
