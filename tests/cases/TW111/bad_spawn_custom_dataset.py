# case: static-only
"""TW111: mp.spawn workers wrap the model in DDP but each builds the same loader over a custom Dataset."""
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Regression(Dataset):
    def __init__(self, n=512):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 8, generator=g)
        self.y = self.x @ torch.ones(8, 1)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, index):
        return self.x[index], self.y[index]


def worker(rank, world_size):
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29511", rank=rank, world_size=world_size)
    net = nn.Linear(8, 1)
    ddp_net = nn.parallel.DistributedDataParallel(net)
    train_loader = DataLoader(Regression(), batch_size=64, shuffle=True, drop_last=True)  # error: TW111
    optimizer = torch.optim.Adam(ddp_net.parameters(), lr=1e-2)
    for epoch in range(5):
        for inputs, targets in train_loader:
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(ddp_net(inputs), targets)
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(worker, args=(2,), nprocs=2)
