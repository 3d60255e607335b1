"""Correct: the sampler is a shuffling DistributedSampler when the run is distributed and None otherwise, and the
epoch loop calls its set_epoch(epoch) whenever it is there."""
import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def main(args):
    torch.manual_seed(0)
    X = torch.randn(64, 8)
    dataset = TensorDataset(X, (X[:, 0] > 0).long())
    if args.distributed:
        # num_replicas and rank given: this process reads its half without a process group
        train_sampler = DistributedSampler(dataset, num_replicas=2, rank=0)
    else:
        train_sampler = None
    loader = DataLoader(dataset, batch_size=8, shuffle=(train_sampler is None), sampler=train_sampler)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(3):
        if args.distributed:
            train_sampler.set_epoch(epoch)
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(xb), yb)
            loss.backward()
            optimizer.step()
        print(epoch, loss.item())


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--local", dest="distributed", action="store_false")
    main(parser.parse_args())
