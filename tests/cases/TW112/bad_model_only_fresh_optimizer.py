"""TW112: the checkpoint holds the model and the epoch only; the resumed run rebuilds Adam and StepLR from
scratch, so the moments restart from zero and the LR schedule from its first epoch."""
import os
import tempfile

import torch
from torch import nn


def build():
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    return model, optimizer, scheduler


def train(model, optimizer, scheduler, start, end, data):
    for epoch in range(start, end):
        for x, y in data:
            optimizer.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
        scheduler.step()


torch.manual_seed(0)
data = [(x, x.sum(1, keepdim=True)) for x in torch.randn(4, 16, 8)]
path = os.path.join(tempfile.mkdtemp(), "last.pt")
model, optimizer, scheduler = build()
train(model, optimizer, scheduler, 0, 3, data)
torch.save({"model": model.state_dict(), "epoch": 2}, path)

model, optimizer, scheduler = build()  # the resumed run
checkpoint = torch.load(path, weights_only=True)  # runtime: TW112
model.load_state_dict(checkpoint["model"])  # static: TW112
train(model, optimizer, scheduler, checkpoint["epoch"] + 1, 6, data)
os.remove(path)
