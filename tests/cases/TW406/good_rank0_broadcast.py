# case: static-only
"""Correct: rank 0 draws the permutation once and broadcasts it; every rank uses the same split."""
import torch
import torch.distributed as dist


def split_indices(n, val_fraction=0.1):
    order = [torch.randperm(n).tolist() if dist.get_rank() == 0 else None]
    dist.broadcast_object_list(order, src=0)
    cut = int(n * (1 - val_fraction))
    return order[0][:cut], order[0][cut:]


if __name__ == "__main__":
    dist.init_process_group("gloo")
    train_idx, val_idx = split_indices(1000)
    print(len(train_idx), len(val_idx))
