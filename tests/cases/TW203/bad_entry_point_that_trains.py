"""TW203: `run()` is started through a command table (nothing in the file calls it by name), so its callers are not
seen; it runs backward() itself, so autograd is on in it, and its per-epoch validation records a graph for nothing."""
import sys

import torch
from torch import nn


def run():
    torch.manual_seed(0)
    train = [(torch.randn(8, 6), torch.randint(0, 2, (8,))) for _ in range(3)]
    val = [(torch.randn(8, 6), torch.randint(0, 2, (8,))) for _ in range(2)]
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(2):
        model.train()
        for x, y in train:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
        model.eval()
        correct = 0
        for x, y in val:
            correct += (model(x).argmax(1) == y).sum().item()  # error: TW203
        print(epoch, correct)


COMMANDS = {"run": run}
if __name__ == "__main__":
    COMMANDS[sys.argv[1] if len(sys.argv) > 1 else "run"]()
