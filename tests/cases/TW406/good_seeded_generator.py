# case: static-only
"""Correct: the split uses a generator with a fixed seed: every rank and every resume draws the same split."""
import torch
import torch.distributed as dist
from torch.utils.data import TensorDataset, random_split


def main():
    dist.init_process_group("gloo")
    data = TensorDataset(torch.randn(1000, 8), torch.randint(0, 2, (1000,)))
    train_set, val_set = random_split(data, [800, 200], generator=torch.Generator().manual_seed(42))
    print(dist.get_rank(), len(train_set), len(val_set))


if __name__ == "__main__":
    main()
