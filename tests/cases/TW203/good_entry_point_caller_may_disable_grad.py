"""`run_epoch()` trains or evaluates; nothing in the file calls it by name, and its backward() runs only when
training, so a caller may well evaluate it under no_grad (the command table below does): not reported."""
import sys

import torch
from torch import nn

torch.manual_seed(0)
batches = [(torch.randn(8, 6), torch.randint(0, 2, (8,))) for _ in range(3)]
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


def run_epoch(training):
    correct = 0
    for x, y in batches:
        if training:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
        else:
            correct += (model(x).argmax(1) == y).sum().item()
    return correct


def evaluate():
    with torch.no_grad():
        return STEPS["epoch"](False)


STEPS = {"epoch": run_epoch}
if __name__ == "__main__":
    for _ in range(2):
        STEPS["epoch"](True)
        print(evaluate())
    del sys.argv[1:]
