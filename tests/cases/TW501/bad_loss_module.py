# case: static-only
"""TW501: a custom loss Module that only stores floats; calling it fails inside nn.Module.__call__."""
import torch
from torch import nn


class SmoothedCrossEntropy(nn.Module):
    def __init__(self, smoothing=0.1):  # error: TW501
        self.smoothing = smoothing

    def forward(self, logits, target):
        return nn.functional.cross_entropy(logits, target, label_smoothing=self.smoothing)


def train_one_epoch(model, X, Y, optimizer, criterion):
    model.train()
    perm = torch.randperm(len(X))
    for start in range(0, len(X), 8):
        idx = perm[start:start + 8]
        optimizer.zero_grad()
        loss = criterion(model(X[idx]), Y[idx])
        loss.backward()
        optimizer.step()
    return loss.item()


torch.manual_seed(0)
model = nn.Linear(8, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
X, Y = torch.randn(32, 8), torch.randint(0, 3, (32,))
for epoch in range(2):
    print(epoch, train_one_epoch(model, X, Y, optimizer, SmoothedCrossEntropy()))
