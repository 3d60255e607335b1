"""Two gloo ranks started as multiprocessing.Process objects; the DistributedSampler never gets set_epoch
(TW110), and the epochs run in a helper. ``python process_ranks.py PORT START_METHOD``."""
import os
import sys
import multiprocessing

import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def one_epoch(model, loader, optimizer):
    for x, y in loader:  # runtime: TW110
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()


def worker(rank, port):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(32, 3), torch.randn(32, 1))
    loader = DataLoader(data, batch_size=4, sampler=DistributedSampler(data))
    model = nn.parallel.DistributedDataParallel(nn.Linear(3, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(3):
        one_epoch(model, loader, optimizer)
    dist.barrier()
    os._exit(0)


if __name__ == "__main__":
    context = multiprocessing.get_context(sys.argv[2])
    ranks = [context.Process(target=worker, args=(rank, sys.argv[1])) for rank in range(2)]
    for process in ranks:
        process.start()
    for process in ranks:
        process.join()
    sys.exit(max(process.exitcode for process in ranks))
