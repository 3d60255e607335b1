"""TW108: batches come from a generator function (no DataLoader the checker could name), but the loop feeds them to
the model, so they are the data; the loss reads `out.detach()` and the labels of the same batch: no gradient."""
import torch
from torch import nn


def batches(features, labels, size):
    order = torch.randperm(len(features))
    for start in range(0, len(features), size):
        idx = order[start:start + size]
        yield features[idx], labels[idx]


torch.manual_seed(0)
device = torch.device("cpu")
features, labels = torch.randn(24, 6), torch.randint(0, 3, (24,))
model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss()
for epoch in range(2):
    for x, y in batches(features, labels, 8):
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        out = model(x)
        loss = criterion(out.detach(), y).requires_grad_()
        loss.backward()  # error: TW108
        optimizer.step()
print(loss.item())
