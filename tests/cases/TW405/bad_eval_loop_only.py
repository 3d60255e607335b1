# case: static-only
"""TW405: an ImageFolder whose only loop is an evaluation pass (no backward) reads images through RandAugment."""
import torch
from torch import nn
from torch.utils.data import DataLoader
from torchvision import datasets, models, transforms


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    hits = total = 0
    for images, labels in loader:
        hits += (model(images).argmax(1) == labels).sum().item()
        total += labels.numel()
    return hits / total


tf = transforms.Compose([transforms.Resize(256), transforms.RandAugment(), transforms.CenterCrop(224), transforms.ToTensor()])
holdout = datasets.ImageFolder("/data/holdout", transform=tf)
holdout_loader = DataLoader(holdout, batch_size=64, num_workers=4)  # error: TW405
net = models.resnet18(weights="DEFAULT")
print(evaluate(net, holdout_loader))
