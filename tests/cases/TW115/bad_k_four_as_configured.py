"""TW115: `accum_steps = batch_size // MAX_DEVICE_BATCH` for a batch larger than one device holds, and the one call
passes a batch of 64: k = 4, and the 5 batches of an epoch (72 samples of 16) leave 1 micro-batch over, added into
the next epoch's first step."""
import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

MAX_DEVICE_BATCH = 16


def run_training(settings, cli):
    torch.manual_seed(int(settings["seed"]))
    epochs = int(settings["epochs"])
    batch_size = int(settings["batch_size"])
    accum_steps = 1
    if batch_size > MAX_DEVICE_BATCH and not cli.cpu_only:
        accum_steps = batch_size // MAX_DEVICE_BATCH
        batch_size = MAX_DEVICE_BATCH
    model = nn.Linear(6, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=float(settings["lr"]))
    loader = DataLoader(TensorDataset(torch.randn(72, 6), torch.randint(0, 2, (72,))), batch_size=batch_size, shuffle=True)
    for epoch in range(epochs):
        model.train()
        for step, (x, y) in enumerate(loader):
            loss = nn.functional.cross_entropy(model(x), y) / accum_steps
            loss.backward()
            if (step + 1) % accum_steps == 0:  # static: TW115
                optimizer.step()  # runtime: TW115
                optimizer.zero_grad()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cpu-only", action="store_true")
    cli = parser.parse_args()
    settings = {"lr": 0.05, "epochs": 2, "seed": 0, "batch_size": 64}
    run_training(settings, cli)


if __name__ == "__main__":
    main()
