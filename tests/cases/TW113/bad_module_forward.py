# case: static-only
"""TW113: the training forward goes through `ddp_model.module(x)`: DDP's reducer never sees it, the gradients are
not all-reduced, and each rank steps on its own gradients (the replicas drift apart)."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2))
    ddp_model = DDP(model)
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.1)
    dataset = TensorDataset(torch.randn(256, 10), torch.randint(0, 2, (256,)))
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=32, sampler=sampler)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in loader:
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(ddp_model.module(x), y)  # error: TW113
            loss.backward()
            optimizer.step()
    if int(os.environ.get("RANK", 0)) == 0:
        print("done")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
