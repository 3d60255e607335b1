# case: static-only
"""TW403: DistributedDataParallel with `device_ids` (or DataParallel) would move the batch, but with `--gpu` and no
distributed run the model is moved bare to that GPU, and the images are never moved (only the targets are)."""
import argparse

import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--gpu", type=int, default=None)
parser.add_argument("--distributed", action="store_true")


def train(loader, model, criterion, optimizer, args):
    model.train()
    for images, target in loader:
        target = target.cuda(args.gpu, non_blocking=True)
        output = model(images)  # static: TW403
        loss = criterion(output, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main():
    args = parser.parse_args()
    model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 6 * 6, 10))
    if args.distributed:
        dist.init_process_group("nccl")
        model.cuda(args.gpu)
        model = nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])
    elif args.gpu is not None:
        torch.cuda.set_device(args.gpu)
        model = model.cuda(args.gpu)
    else:
        model = nn.DataParallel(model).cuda()
    criterion = nn.CrossEntropyLoss().cuda(args.gpu)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = TensorDataset(torch.randn(32, 3, 8, 8), torch.randint(0, 10, (32,)))
    sampler = DistributedSampler(data) if args.distributed else None
    loader = DataLoader(data, batch_size=8, shuffle=sampler is None, sampler=sampler)
    for epoch in range(2):
        if sampler is not None:
            sampler.set_epoch(epoch)
        train(loader, model, criterion, optimizer, args)


if __name__ == "__main__":
    main()
