# case: static-only
"""TW113: the script wraps the model at top level and hands the wrapper to `train_model`, whose training forward
goes through `model.module(x)`; the wrapper runs only for the adversarial batch, which is off unless `--adv` is
given: in a run without it no forward goes through the wrapper and the step applies gradients that were never
all-reduced."""
import argparse

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


def train_model(model, optimizer, loaders, epochs):
    for epoch in range(epochs):
        for phase in ["train", "val"]:
            model.train(phase == "train")
            for x, y in loaders[phase]:
                optimizer.zero_grad()
                if phase == "val":
                    with torch.no_grad():
                        outputs = model(x)
                else:
                    outputs = model.module(x)  # error: TW113
                loss = nn.functional.mse_loss(outputs, y)
                if args.adv > 0:
                    loss = loss + args.adv * nn.functional.mse_loss(model(x + 0.1 * torch.randn_like(x)), y)
                if phase == "train":
                    loss.backward()
                    optimizer.step()
    return model


parser = argparse.ArgumentParser()
parser.add_argument("--adv", type=float, default=0.0)
args = parser.parse_args()
dist.init_process_group("gloo")
torch.manual_seed(0)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model = DDP(model)
loaders = {phase: [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(4)] for phase in ["train", "val"]}
model = train_model(model, optimizer, loaders, 3)
dist.destroy_process_group()
