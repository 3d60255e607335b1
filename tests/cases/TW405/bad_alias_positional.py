# case: static-only
"""TW405: `val_transform = train_transform` (a shortcut), passed positionally to ImageFolder for the validation folder."""
import torch
from torch import nn
from torch.utils.data import DataLoader
from torchvision import datasets
from torchvision import transforms as T

train_transform = T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.ToTensor()])
val_transform = train_transform
train_data = datasets.ImageFolder("/data/train", train_transform)
val_data = datasets.ImageFolder("/data/val", val_transform)
train_loader = DataLoader(train_data, batch_size=32, shuffle=True)
val_loader = DataLoader(val_data, batch_size=64)  # error: TW405
model = nn.Sequential(nn.Flatten(), nn.LazyLinear(10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)


def validate():
    model.eval()
    with torch.no_grad():
        return sum((model(x).argmax(1) == y).sum().item() for x, y in val_loader)


for epoch in range(5):
    model.train()
    for x, y in train_loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    print(epoch, validate())
