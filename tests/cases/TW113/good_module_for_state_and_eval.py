# case: static-only
"""Correct: training goes through the wrapper; `ddp.module` serves the state_dict, an attribute and a no_grad
evaluation."""
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.num_classes = 3
        self.fc = nn.Linear(6, 3)

    def forward(self, x):
        return self.fc(x)


def main():
    dist.init_process_group("gloo")
    model = Net()
    ddp = DDP(model)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.1)
    batches = [(torch.randn(8, 6), torch.randint(0, 3, (8,))) for _ in range(4)]
    for epoch in range(2):
        ddp.train()
        for x, y in batches:
            optimizer.zero_grad()
            nn.functional.cross_entropy(ddp(x), y).backward()
            optimizer.step()
        ddp.eval()
        with torch.no_grad():
            hits = sum((ddp.module(x).argmax(1) == y).sum().item() for x, y in batches)
        print(epoch, hits, ddp.module.num_classes)
    state = ddp.module.state_dict()
    print(len(state))


if __name__ == "__main__":
    main()
