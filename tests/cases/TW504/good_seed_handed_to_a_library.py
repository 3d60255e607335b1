# case: static-only
"""Correct: the command line's --seed goes to a library that the check does not read (`setup(args)` and
`Experiment(seed=...)` may seed torch), so the program is not known to be unseeded."""
import argparse

import torch
from torch import nn

from experiments import Experiment, setup

parser = argparse.ArgumentParser()
parser.add_argument("--seed", type=int, default=0)
args = parser.parse_args()
print("seed", args.seed)
setup(args)
experiment = Experiment(seed=args.seed)
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(32, 4)
for step in range(5):
    optimizer.zero_grad()
    nn.functional.mse_loss(model(x), x[:, :1]).backward()
    optimizer.step()
