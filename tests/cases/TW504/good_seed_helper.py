"""Correct: a project-style set_seed helper seeds random, numpy and torch from the command line's --seed."""
import argparse
import random

import numpy as np
import torch
from torch import nn


def set_seed(value):
    random.seed(value)
    np.random.seed(value)
    torch.manual_seed(value)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args([])
    set_seed(args.seed)
    model = nn.Sequential(nn.Linear(3, 8), nn.Dropout(0.1), nn.Linear(8, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    x = torch.randn(32, 3)
    for step in range(10):
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), x[:, :1]).backward()
        optimizer.step()


if __name__ == "__main__":
    main()
