"""Correct: the `record()` helper appends `value.item()`, a number, to the module-level list; a helper that builds
its own list and returns it keeps nothing past the call."""
import torch
from torch import nn

history = []


def record(value):
    history.append(value.item())


def as_list(value):
    out = []
    out.append(value)
    return len(out)


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [(torch.randn(4, 8), torch.randint(0, 2, (4,))) for _ in range(3)]
for epoch in range(2):
    for x, y in batches:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        record(loss)
        as_list(loss)
    print(epoch, len(history))
