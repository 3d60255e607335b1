"""TW504: --seed seeds Python's and NumPy's generators and is printed, but torch is never seeded: the initial
weights and the Dropout masks still differ from run to run."""
import argparse
import random

import numpy as np
import torch
from torch import nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=1, help="random seed (default: 1)")
    args = parser.parse_args([])
    if args.seed is not None:
        random.seed(args.seed)
        np.random.seed(args.seed)
    print(f"seed: {args.seed}")
    model = nn.Sequential(nn.Linear(4, 16), nn.Dropout(0.1), nn.Linear(16, 1))  # static: TW504
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.linspace(-1, 1, 32).unsqueeze(1).repeat(1, 4)
    for step in range(5):
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), x[:, :1]).backward()
        optimizer.step()


if __name__ == "__main__":
    main()
