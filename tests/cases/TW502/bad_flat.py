"""TW502: torch.load(weights_only=False) unpickles whatever the checkpoint file contains (here a
checkpoint that another run wrote: this script did not write it)."""
import io

import torch
from torch import nn


def train_elsewhere():
    """Stands for the run (or the download) that produced the checkpoint file."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    X, Y = torch.randn(32, 8), torch.randint(0, 2, (32,))
    for epoch in range(2):
        perm = torch.randperm(32)
        for start in range(0, 32, 8):
            idx = perm[start:start + 8]
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(X[idx]), Y[idx])
            loss.backward()
            optimizer.step()
    file = io.BytesIO()
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}, file)
    file.seek(0)
    return file


model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
checkpoint = train_elsewhere()
state = torch.load(checkpoint, weights_only=False)  # error: TW502
model.load_state_dict(state["model"])
optimizer.load_state_dict(state["optimizer"])
print("resumed after epoch", state["epoch"])
