# case: static-only
"""TW406: the loader follows PyTorch's reproducibility recipe (a seeded Generator and a `worker_init_fn` that
seeds NumPy and `random` from `torch.initial_seed()`), but the train/val split itself draws from the unseeded
global generator: each DDP rank draws its own validation set. The generator seeds the shuffle it is given, the
worker function runs in the loader's workers, and `initial_seed()` only reads a seed."""
import random

import numpy as np
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset, random_split
from torch.utils.data.distributed import DistributedSampler


def seed_worker(worker_id):
    worker_seed = torch.initial_seed() % 2**32
    np.random.seed(worker_seed)
    random.seed(worker_seed)


def main():
    dist.init_process_group("gloo")
    data = TensorDataset(torch.randn(1000, 8), torch.randint(0, 2, (1000,)))
    train_set, val_set = random_split(data, [800, 200])  # error: TW406
    g = torch.Generator()
    g.manual_seed(0)
    sampler = DistributedSampler(train_set)
    loader = DataLoader(train_set, batch_size=32, sampler=sampler, worker_init_fn=seed_worker, generator=g)
    model = DDP(nn.Linear(8, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()


if __name__ == "__main__":
    main()
