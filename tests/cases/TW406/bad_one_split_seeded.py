# case: static-only
"""TW406: the train/val split is seeded with its own generator, but the val/test split after it is not: a
Generator's manual_seed makes only the split it is given reproducible, and each DDP rank draws its own test set."""
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset, random_split
from torch.utils.data.distributed import DistributedSampler


def main():
    dist.init_process_group("gloo")
    data = TensorDataset(torch.randn(1000, 8), torch.randint(0, 2, (1000,)))
    train_set, rest = random_split(data, [800, 200], generator=torch.Generator().manual_seed(0))
    val_set, test_set = random_split(rest, [100, 100])  # error: TW406
    sampler = DistributedSampler(train_set)
    loader = DataLoader(train_set, batch_size=32, sampler=sampler)
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
