"""The same meter and recorder handed floats (`loss.item()`) or a detached tensor: nothing keeps a graph."""
import torch
from torch import nn


class AverageMeter:
    def __init__(self):
        self.values = []

    def update(self, value):
        self.values.append(value)

    def average(self):
        return sum(float(v) for v in self.values) / max(len(self.values), 1)


def record(history, loss):
    history.append(loss)


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [(torch.randn(4, 8), torch.randint(0, 2, (4,))) for _ in range(3)]
meter = AverageMeter()
history = []
for epoch in range(2):
    for x, y in batches:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        meter.update(loss.detach())
        record(history, loss.item())
    print(epoch, meter.average(), len(history))
