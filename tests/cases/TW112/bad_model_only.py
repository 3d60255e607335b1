"""TW112: the checkpoint holds the model and the epoch; resuming restores the model only, Adam restarts from zero."""
import io

import torch
from torch import nn

torch.manual_seed(0)
X = torch.randn(64, 8)
Y = X.sum(1, keepdim=True)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)


def train(start, end):
    for epoch in range(start, end):
        for i in range(0, 64, 16):
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(X[i:i + 16]), Y[i:i + 16])
            loss.backward()
            optimizer.step()


train(0, 2)
buffer = io.BytesIO()
torch.save({"model": model.state_dict(), "epoch": 1}, buffer)
buffer.seek(0)

checkpoint = torch.load(buffer, weights_only=True)
model.load_state_dict(checkpoint["model"])  # static: TW112
train(checkpoint["epoch"] + 1, 4)
