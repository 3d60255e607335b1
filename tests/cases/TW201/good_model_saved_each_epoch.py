"""The epoch loop saves the whole model after validation, and train() switches back to training mode first."""
import os
import tempfile

import torch
from torch import nn


def train(model, batches, optimizer):
    model.train()
    for x, y in batches:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()


def test(model, batches):
    model.eval()
    with torch.no_grad():
        return sum((model(x).argmax(1) == y).sum().item() for x, y in batches)


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [(torch.randn(8, 6), torch.randint(0, 2, (8,))) for _ in range(3)]
folder = tempfile.mkdtemp()
for epoch in range(3):
    train(model, batches, optimizer)
    print(epoch, test(model, batches))
    torch.save(model, os.path.join(folder, "latest.pth"))
