# case: static-only
"""TW111: a trainer class wraps its model in DDP and builds a plain loader from torchvision data."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader
from torchvision import datasets, transforms


class Trainer:
    def __init__(self, model, local_rank):
        self.model = DistributedDataParallel(model.to(local_rank), device_ids=[local_rank])
        data = datasets.MNIST("data", train=True, download=True, transform=transforms.ToTensor())
        self.loader = DataLoader(data, batch_size=128, shuffle=True, num_workers=4)  # error: TW111
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=1e-3)
        self.device = local_rank

    def train(self, epochs):
        for epoch in range(epochs):
            for images, labels in self.loader:
                images, labels = images.to(self.device), labels.to(self.device)
                self.optimizer.zero_grad()
                loss = nn.functional.cross_entropy(self.model(images), labels)
                loss.backward()
                self.optimizer.step()


if __name__ == "__main__":
    dist.init_process_group("nccl")
    rank = int(os.environ["LOCAL_RANK"])
    Trainer(nn.Sequential(nn.Flatten(), nn.Linear(784, 10)), rank).train(2)
