"""TW110: the torchvision reference scripts' form (DETR, DeiT, DINO, MAE): the epoch helper iterates
`metric_logger.log_every(data_loader, print_freq, header)`, which yields each batch of the loader, and nothing calls
`sampler.set_epoch(epoch)`: every epoch reads the same order."""
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class MetricLogger:
    def __init__(self):
        self.meters = {}

    def update(self, **values):
        self.meters.update(values)

    def log_every(self, iterable, print_freq, header=""):
        start = time.time()
        for i, obj in enumerate(iterable):  # runtime: TW110
            yield obj
            if i % print_freq == 0:
                print(header, i, self.meters, f"{time.time() - start:.2f}s")


def train_one_epoch(model, criterion, data_loader, optimizer, epoch):
    model.train()
    metric_logger = MetricLogger()
    for samples, targets in metric_logger.log_every(data_loader, 10, f"Epoch: [{epoch}]"):  # static: TW110
        loss = criterion(model(samples), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        metric_logger.update(loss=loss.item())


def main():
    torch.manual_seed(0)
    dataset = TensorDataset(torch.randn(64, 8), torch.randint(0, 2, (64,)))
    sampler = DistributedSampler(dataset, num_replicas=2, rank=0, shuffle=True)  # this rank's half, no process group
    data_loader = DataLoader(dataset, sampler=sampler, batch_size=8, drop_last=True)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for epoch in range(3):
        train_one_epoch(model, nn.CrossEntropyLoss(), data_loader, optimizer, epoch)


if __name__ == "__main__":
    main()
