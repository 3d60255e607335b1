# case: static-only
"""Correct: the random pipeline feeds only the training loop (a dict of transforms chooses per split)."""
import os

import torch
from torch import nn
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

data_transforms = {
    "train": transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(), transforms.ToTensor()]),
    "val": transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor()]),
}
image_datasets = {x: datasets.ImageFolder(os.path.join("data", x), data_transforms[x]) for x in ["train", "val"]}
augment = transforms.Compose([transforms.RandomRotation(10), transforms.ToTensor()])
train_set = datasets.MNIST("data", train=True, download=True, transform=augment)
loader = DataLoader(train_set, batch_size=64, shuffle=True)
model = nn.Sequential(nn.Flatten(), nn.Linear(784, 10))
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(2):
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
