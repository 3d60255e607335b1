# case: static-only
"""TW112: SGD with momentum is wrapped for layer-wise rate control (`optimizer = LARC(optimizer=optimizer)`), and the
resume restores the model and the epoch but not the optimizer: the momentum buffers restart from zero. The wrapper's
constructor takes the optimizer to wrap it, not to load its state."""
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
    model.load_state_dict(checkpoint["state_dict"])  # static: TW112
batches = [(torch.randn(16, 8), torch.randn(16, 1)) for _ in range(4)]
for epoch in range(start_epoch, 10):
    for x, y in batches:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
    torch.save({"epoch": epoch + 1, "state_dict": model.state_dict(), "optimizer": optimizer.state_dict()}, "last.pt")
