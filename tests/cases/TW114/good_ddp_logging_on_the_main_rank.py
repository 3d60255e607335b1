"""Correct: a DDP model whose rank 0 only logs (reads the weights, changes nothing): the replicas stay equal."""
import os
import shutil
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


def worker(rank, world_size, store):
    torch.set_num_threads(1)  # one CPU thread per rank: two ranks share the cores
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    model = DDP(nn.Linear(8, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    generator = torch.Generator().manual_seed(100 + rank)
    for step in range(4):
        x, y = torch.randn(16, 8, generator=generator), torch.randint(0, 2, (16,), generator=generator)
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        if rank == 0:
            print(step, loss.item(), float(model.module.weight.detach().norm()))
    dist.destroy_process_group()


if __name__ == "__main__":
    folder = tempfile.mkdtemp()
    try:
        mp.start_processes(worker, args=(2, os.path.join(folder, "store")), nprocs=2, start_method="forkserver")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
