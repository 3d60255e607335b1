# case: static-only
"""Correct: on resume the best weights are loaded only to measure their accuracy, then the full checkpoint
(model and optimizer) is restored; the epoch-indexed scheduler is replayed with step(epoch)."""
import torch
from torch import nn

model = nn.Linear(8, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[30, 60], gamma=0.2)
start = 1
resume = True
if resume:
    model.load_state_dict(torch.load("best.pt", weights_only=True))
    print("best accuracy", model(torch.randn(4, 8)).argmax(1))
    state = torch.load("last.pt", weights_only=True)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    start = state["epoch"] + 1
for epoch in range(1, 90):
    if epoch >= start:
        for _ in range(10):
            x, y = torch.randn(16, 8), torch.randint(0, 2, (16,))
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
    scheduler.step(epoch)
