"""Two gloo ranks started by torch.multiprocessing.spawn; the rank function forgets zero_grad (TW101)
and every rank reads the whole dataset under DDP (TW111). ``python spawn_gloo.py PORT [START_METHOD]``."""
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def train(rank, world_size, port):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(32, 4), torch.randint(0, 2, (32,)))
    loader = DataLoader(data, batch_size=8, shuffle=True)  # runtime: TW111
    model = nn.parallel.DistributedDataParallel(nn.Linear(4, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(2):
        for x, y in loader:
            nn.functional.cross_entropy(model(x), y).backward()  # runtime: TW101
            optimizer.step()
    dist.barrier()
    os._exit(0)  # gloo's teardown may abort under load after the work is done


if __name__ == "__main__":
    method = sys.argv[2] if len(sys.argv) > 2 else "spawn"
    mp.start_processes(train, args=(2, sys.argv[1]), nprocs=2, start_method=method)
