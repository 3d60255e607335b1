"""TW204: a `record()` helper appends the loss it is handed to a module-level list: every step's autograd nodes
stay reachable from the list, which holds tensors where numbers were meant."""
import torch
from torch import nn

history = []


def record(value):
    history.append(value)  # error: TW204


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
    print(epoch, len(history))
