# case: static-only
"""Correct: SGD with momentum is wrapped for layer-wise rate control (`optimizer = LARC(optimizer=optimizer)`), and the
resume restores the model, the epoch and the optimizer through the wrapper (its state is the wrapped SGD's)."""
import argparse
import os

import torch
from apex.parallel.LARC import LARC
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--resume", default="")
args = parser.parse_args()
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
optimizer = LARC(optimizer=optimizer, trust_coefficient=0.001, clip=False)
start_epoch = 0
if args.resume and os.path.isfile(args.resume):
    checkpoint = torch.load(args.resume, weights_only=True)
    start_epoch = checkpoint["epoch"]
    model.load_state_dict(checkpoint["state_dict"])
    optimizer.load_state_dict(checkpoint["optimizer"])
batches = [(torch.randn(16, 8), torch.randn(16, 1)) for _ in range(4)]
for epoch in range(start_epoch, 10):
    for x, y in batches:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
    torch.save({"epoch": epoch + 1, "state_dict": model.state_dict(), "optimizer": optimizer.state_dict()}, "last.pt")
