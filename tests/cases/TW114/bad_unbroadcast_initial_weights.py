"""TW114: hand-written data parallelism: gradients are averaged with all_reduce, but each rank seeds with its own
rank and the initial weights are never broadcast, so the two ranks train two different models."""
import os
import shutil
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn


def worker(rank, world_size, store):
    torch.set_num_threads(1)  # one CPU thread per rank: two ranks share the cores
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=world_size)
    torch.manual_seed(rank)  # a per-rank seed, meant for data order, also draws the initial weights
    model = nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for step in range(4):
        x = torch.randn(8, 6)
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), x[:, :1]).backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
            p.grad /= world_size
        optimizer.step()  # runtime: TW114
    dist.destroy_process_group()


if __name__ == "__main__":
    folder = tempfile.mkdtemp()
    try:
        mp.start_processes(worker, args=(2, os.path.join(folder, "store")), nprocs=2, start_method="forkserver")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
