# case: static-only
"""TW113: `model = DDP(model)` rebinds the name, then a helper's training step calls `model.module.forward(...)`
to reach a keyword the wrapper's forward was thought not to pass."""
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 2)

    def forward(self, x, scale=1.0):
        return self.fc(x) * scale


def train_step(model, optimizer, x, y):
    optimizer.zero_grad()
    logits = model.module.forward(x, scale=0.5)  # error: TW113
    nn.functional.cross_entropy(logits, y).backward()
    optimizer.step()


def main():
    dist.init_process_group("gloo")
    model = Net()
    model = DistributedDataParallel(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(2):
        for step in range(10):
            train_step(model, optimizer, torch.randn(4, 8), torch.randint(0, 2, (4,)))


if __name__ == "__main__":
    main()
