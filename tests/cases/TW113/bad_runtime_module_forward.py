"""TW113 at run time: two gloo ranks; the training forward calls `ddp.module(x)` (copied from code that needed
a custom method of the inner model), so DDP never all-reduces and each rank steps on its own gradients."""
import os
import shutil
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel


def worker(rank, world_size, store):
    torch.set_num_threads(1)  # one CPU thread per rank: two ranks share the cores
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    ddp = DistributedDataParallel(nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 1)))
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.1)
    generator = torch.Generator().manual_seed(rank)
    for step in range(3):
        x = torch.randn(8, 6, generator=generator)
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(ddp.module(x), x[:, :1])  # error: TW113
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        print(rank, float(ddp.module(torch.ones(1, 6))))
    dist.destroy_process_group()


if __name__ == "__main__":
    folder = tempfile.mkdtemp()
    try:
        mp.start_processes(worker, args=(2, os.path.join(folder, "store")), nprocs=2, start_method="forkserver")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
