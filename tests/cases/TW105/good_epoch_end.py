"""StepLR stepped once per epoch, after that epoch's optimizer steps."""
import torch
from torch import nn
from torch.optim.lr_scheduler import StepLR


def train_one_epoch(model, X, Y, optimizer):
    model.train()
    perm = torch.randperm(len(X))
    for start in range(0, len(X), 8):
        idx = perm[start:start + 8]
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(X[idx]), Y[idx])
        loss.backward()
        optimizer.step()
    return loss.item()


torch.manual_seed(0)
X = torch.randn(32, 4)
Y = X @ torch.randn(4, 1)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
scheduler = StepLR(optimizer, step_size=2, gamma=0.5)
for epoch in range(4):
    print(epoch, train_one_epoch(model, X, Y, optimizer))
    scheduler.step()
