"""TW203: `--test-only` evaluates a model and exits before training starts; the backward() further down the script
never runs after that forward pass, so its graph is never used."""
import argparse
import sys

import torch
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--test-only", action="store_true")
args = parser.parse_args()

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 2))
batches = [(torch.randn(8, 6), torch.randint(0, 2, (8,))) for _ in range(3)]

if args.test_only:
    model.load_state_dict(torch.load("model.pt", weights_only=True))
    model.eval()
    total = 0.0
    for x, y in batches:
        outputs = model(x)  # static: TW203
        total += nn.functional.cross_entropy(outputs, y).item()
    print(total)
    sys.exit(0)

optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(3):
    model.train()
    for x, y in batches:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
