"""TW202: each epoch validates in eval mode unless `--fast` is given; the final test never calls `model.eval()`, so
on a `--fast` run it tests with Dropout on (the last epoch's `model.train()` is the last switch)."""
import argparse

import torch
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--fast", action="store_true")
parser.add_argument("--epochs", type=int, default=3)
args = parser.parse_args()

torch.manual_seed(0)
x, y = torch.randn(40, 6), torch.randint(0, 3, (40,))
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.5), nn.Linear(16, 3))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)


def train(epoch):
    model.train()
    optimizer.zero_grad()
    output = model(x[:30])
    loss = nn.functional.cross_entropy(output, y[:30])
    loss.backward()
    optimizer.step()
    if not args.fast:
        model.eval()
        with torch.no_grad():
            output = model(x[30:])
        print(epoch, nn.functional.cross_entropy(output, y[30:]).item())


def test():
    with torch.no_grad():
        output = model(x[30:])  # static: TW202
    print("test accuracy", (output.argmax(1) == y[30:]).float().mean().item())


for epoch in range(args.epochs):
    train(epoch)
test()
