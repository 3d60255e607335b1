# case: static-only
"""TW603: the model frozen right after its optimizer is built (a backbone freeze that names the whole model), then
wrapped in DistributedDataParallel, which adds no parameter: every parameter the optimizer holds stays frozen."""
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main(rank, world_size, num_epochs=3):
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    model = nn.Sequential(nn.Linear(2, 30), nn.ReLU(), nn.Linear(30, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    model.requires_grad_(False)  # error: TW603
    model = DDP(model)
    features, labels = torch.randn(16, 2), torch.randint(0, 2, (16,))
    for epoch in range(num_epochs):
        model.train()
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(features), labels).backward()
        optimizer.step()
