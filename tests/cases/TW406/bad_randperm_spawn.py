# case: static-only
"""TW406: mp.spawn workers each permute the indices with torch.randperm and cut train/val from it."""
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.utils.data import Subset, TensorDataset


def worker(rank, world_size, dataset):
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29555", rank=rank, world_size=world_size)
    order = torch.randperm(len(dataset))  # error: TW406
    cut = int(0.9 * len(dataset))
    train_part = Subset(dataset, order[:cut].tolist())
    val_part = Subset(dataset, order[cut:].tolist())
    print(rank, len(train_part), len(val_part))
    dist.destroy_process_group()


if __name__ == "__main__":
    data = TensorDataset(torch.arange(100).float())
    mp.spawn(worker, args=(2, data), nprocs=2)
