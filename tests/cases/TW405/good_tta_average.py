# case: static-only
"""Correct: deliberate test-time augmentation: several random views of each test batch are averaged."""
import torch
from torch.utils.data import DataLoader
from torchvision import datasets, models, transforms

tta = transforms.Compose([transforms.RandomResizedCrop(224, scale=(0.8, 1.0)), transforms.RandomHorizontalFlip(), transforms.ToTensor()])
test_set = datasets.ImageFolder("/data/test", transform=tta)
loader = DataLoader(test_set, batch_size=32)
model = models.resnet50(weights="DEFAULT").eval()
predictions = []
with torch.no_grad():
    for images, _ in loader:
        views = [model(images) for _ in range(8)]
        predictions.append(torch.stack(views).softmax(-1).mean(0))
