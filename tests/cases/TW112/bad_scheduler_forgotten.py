"""TW112: the resume restores the model and the optimizer but forgets the warmup scheduler: it warms up again."""
import io

import torch
from torch import nn


def make():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    warmup = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / 10))
    return model, optimizer, warmup


def train(model, optimizer, scheduler, steps):
    for _ in range(steps):
        x = torch.randn(8, 6)
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), x.sum(1, keepdim=True)).backward()
        optimizer.step()
        scheduler.step()


model, optimizer, scheduler = make()
train(model, optimizer, scheduler, 12)
saved = io.BytesIO()
torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(),
            "step": 12}, saved)
saved.seek(0)

model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / 10))
state = torch.load(saved, weights_only=True)  # runtime: TW112
model.load_state_dict(state["model"])  # static: TW112
optimizer.load_state_dict(state["optimizer"])
train(model, optimizer, scheduler, 5)
