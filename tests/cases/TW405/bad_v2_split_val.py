# case: static-only
"""TW405: a validation split built with transforms.v2 and a random resized crop, read without a loop (e.g. by a framework)."""
import torch
from torchvision.datasets import Flowers102
from torchvision.transforms import v2


def build(root):
    augment = v2.Compose([v2.RandomResizedCrop(224), v2.ColorJitter(0.4, 0.4, 0.4), v2.ToImage(),
                          v2.ToDtype(torch.float32, scale=True)])
    train = Flowers102(root, split="train", transform=augment, download=True)
    val = Flowers102(root, split="val", transform=augment, download=True)  # error: TW405
    return train, val
