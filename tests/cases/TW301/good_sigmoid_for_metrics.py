"""Correct: BCEWithLogitsLoss gets the logits; sigmoid is applied only to report probabilities."""
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(32, 3)
y = (x.sum(1, keepdim=True) > 0).float()
for _ in range(5):
    logits = model(x)
    loss = F.binary_cross_entropy_with_logits(logits, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    accuracy = ((torch.sigmoid(logits.detach()) > 0.5).float() == y).float().mean().item()
