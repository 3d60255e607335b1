"""Correct: the checkpoint holds model, optimizer and scheduler, and resuming restores all three."""
import io

import torch
from torch import nn

torch.manual_seed(0)
X = torch.randn(64, 8)
Y = X.sum(1, keepdim=True)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.9)


def train(start, end):
    for epoch in range(start, end):
        for i in range(0, 64, 16):
            optimizer.zero_grad()
            nn.functional.mse_loss(model(X[i:i + 16]), Y[i:i + 16]).backward()
            optimizer.step()
        scheduler.step()


train(0, 2)
buffer = io.BytesIO()
torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(), "epoch": 1}, buffer)
buffer.seek(0)
checkpoint = torch.load(buffer, weights_only=True)
model.load_state_dict(checkpoint["model"])
optimizer.load_state_dict(checkpoint["optimizer"])
scheduler.load_state_dict(checkpoint["scheduler"])
train(checkpoint["epoch"] + 1, 4)
