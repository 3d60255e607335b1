# case: static-only
"""TW112: the resume reloads only the weights; the optimizer is also handed to the project's WarmUpLR (a
scheduler constructor, which restores nothing), so SGD's momentum still restarts from zero."""
import argparse

import torch
from torch import nn

from utils import WarmUpLR, last_epoch

parser = argparse.ArgumentParser()
parser.add_argument("--resume", action="store_true")
args = parser.parse_args()
net = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 10))
optimizer = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
warmup = WarmUpLR(optimizer, 100)
start = 0
if args.resume:
    net.load_state_dict(torch.load("checkpoints/last.pth", weights_only=True))  # error: TW112
    start = last_epoch("checkpoints")
for epoch in range(start, 200):
    for _ in range(100):
        x, y = torch.randn(32, 16), torch.randint(0, 10, (32,))
        optimizer.zero_grad()
        nn.functional.cross_entropy(net(x), y).backward()
        optimizer.step()
        if epoch == 0:
            warmup.step()
