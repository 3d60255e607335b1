# case: static-only
"""Correct: an IterableDataset that yields only this rank's (and this worker's) share of the stream."""
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, IterableDataset, get_worker_info


class Stream(IterableDataset):
    def __init__(self, n=1024):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        workers, worker = (info.num_workers, info.id) if info else (1, 0)
        step = dist.get_world_size() * workers
        start = dist.get_rank() * workers + worker
        g = torch.Generator().manual_seed(0)
        data = torch.randn(self.n, 4, generator=g)
        for i in range(start, self.n, step):
            yield data[i], data[i].sum(0, keepdim=True)


def main():
    dist.init_process_group("gloo")
    model = DDP(nn.Linear(4, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    loader = DataLoader(Stream(), batch_size=16, num_workers=2)
    for epoch in range(2):
        for x, y in loader:
            optimizer.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()


if __name__ == "__main__":
    main()
