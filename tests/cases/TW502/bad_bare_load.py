"""TW502: a bare torch.load: safe on PyTorch >= 2.6, arbitrary code execution before it."""
import io

import torch
from torch import nn


def save_checkpoint(model, optimizer, epoch):
    buffer = io.BytesIO()
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}, buffer)
    buffer.seek(0)
    return buffer


def load_checkpoint(source, model, optimizer):
    state = torch.load(source, map_location="cpu")  # static: TW502
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    return state["epoch"] + 1


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
Y = X.sum(1, keepdim=True)
model = nn.Linear(4, 1)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
print(0, train_one_epoch(model, X, Y, optimizer))
ckpt = save_checkpoint(model, optimizer, 0)
start = load_checkpoint(ckpt, model, optimizer)
for epoch in range(start, 3):
    print(epoch, train_one_epoch(model, X, Y, optimizer))
