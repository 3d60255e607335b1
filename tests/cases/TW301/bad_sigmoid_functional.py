"""TW301: F.binary_cross_entropy_with_logits on torch.sigmoid(logits): a double sigmoid in a helper."""
import torch
import torch.nn.functional as F
from torch import nn


def step(model, optimizer, x, y):
    logits = model(x)
    probs = torch.sigmoid(logits)
    loss = F.binary_cross_entropy_with_logits(probs, y)  # error: TW301
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(32, 3)
y = (x.sum(1, keepdim=True) > 0).float()
for _ in range(5):
    step(model, optimizer, x, y)
