# case: static-only
"""TW112: `--resume` loads the weights straight from torch.load; the OneCycleLR schedule and Adam start over."""
import argparse

import torch
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--resume", default="")
args = parser.parse_args()

model = nn.Sequential(nn.Linear(10, 32), nn.GELU(), nn.Linear(32, 4))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=1e-2, total_steps=1000)
if args.resume:
    model.load_state_dict(torch.load(args.resume, weights_only=True))  # error: TW112

for step in range(1000):
    x, y = torch.randn(32, 10), torch.randint(0, 4, (32,))
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
    scheduler.step()
    if step % 100 == 0:
        torch.save(model.state_dict(), "model.pt")
