# case: static-only
"""Correct: the script wraps the model at top level and hands the wrapper to `train_model`; in the training phase
the main forward goes through the wrapper (the `else` of `if phase == "val"`), and an auxiliary forward through
`model.module` adds to the same loss, whose gradients the wrapper's reducer all-reduces with the rest. The step
runs under `if phase == "train"`, which is the branch the wrapper forward runs in."""
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
                    outputs = model(x)
                loss = nn.functional.mse_loss(outputs, y)
                if epoch > 0:
                    loss = loss + 0.1 * model.module(x.flip(0)).pow(2).mean()
                if phase == "train":
                    loss.backward()
                    optimizer.step()
    return model


dist.init_process_group("gloo")
torch.manual_seed(0)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model = DDP(model)
loaders = {phase: [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(4)] for phase in ["train", "val"]}
model = train_model(model, optimizer, loaders, 3)
dist.destroy_process_group()
