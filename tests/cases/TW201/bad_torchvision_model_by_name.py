# case: static-only
"""TW201: a torchvision model picked by name at run time (`models.__dict__[args.arch]()`, every one of them built with
BatchNorm or Dropout); validate() switches it to eval mode and train() never switches it back."""
import argparse

import torch
import torchvision.models as models
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--arch", default="resnet18")
parser.add_argument("--epochs", type=int, default=3)


def train(loader, model, optimizer):
    for images, target in loader:
        loss = nn.functional.cross_entropy(model(images), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def validate(loader, model):
    model.eval()  # static: TW201
    with torch.no_grad():
        return sum((model(images).argmax(1) == target).sum().item() for images, target in loader)


def main():
    args = parser.parse_args()
    model = models.__dict__[args.arch]()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = [(torch.randn(2, 3, 64, 64), torch.randint(0, 1000, (2,)))]
    for epoch in range(args.epochs):
        train(loader, model, optimizer)
        print(epoch, validate(loader, model))


if __name__ == "__main__":
    main()
