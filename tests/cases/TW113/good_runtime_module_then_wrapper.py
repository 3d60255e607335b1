"""Correct at run time: two gloo ranks accumulate two micro-batches, the first through `ddp.module` inside
`no_sync()`, the last through the wrapper, so the reducer all-reduces the summed gradients before the step; a
`no_grad` evaluation through `ddp.module` trains nothing."""
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
    ddp = DistributedDataParallel(nn.Linear(6, 1))
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.1)
    generator = torch.Generator().manual_seed(rank)
    for step in range(3):
        first, last = torch.randn(4, 6, generator=generator), torch.randn(4, 6, generator=generator)
        optimizer.zero_grad()
        with ddp.no_sync():
            (nn.functional.mse_loss(ddp.module(first), first[:, :1]) / 2).backward()
        (nn.functional.mse_loss(ddp(last), last[:, :1]) / 2).backward()
        optimizer.step()
        with torch.no_grad():
            ddp.module(torch.ones(1, 6))
    dist.destroy_process_group()


if __name__ == "__main__":
    folder = tempfile.mkdtemp()
    try:
        mp.start_processes(worker, args=(2, os.path.join(folder, "store")), nprocs=2, start_method="forkserver")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
