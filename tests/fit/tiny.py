"""The tiny classifier and data shared by the checkpoint, resume and fault tests."""

import torch
from torch import nn

N, D, C = 60, 5, 3  # batch_size 6 -> 10 batches per epoch


def make_model(seed=1):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(D, 12), nn.ReLU(), nn.Dropout(0.3), nn.Linear(12, C))


def make_data():
    g = torch.Generator().manual_seed(3)
    return torch.randn(N, D, generator=g), torch.randint(0, C, (N,), generator=g)
