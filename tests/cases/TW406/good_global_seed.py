# case: static-only
"""Correct: torch.manual_seed before random_split fixes the default generator, identically on every rank."""
import torch
import torch.distributed as dist
from torch.utils.data import TensorDataset, random_split

dist.init_process_group("gloo")
torch.manual_seed(1234)
data = TensorDataset(torch.randn(500, 4))
train_set, val_set = random_split(data, [0.9, 0.1])
print(len(train_set), len(val_set))
