# case: runtime-only
"""TW405: the validation split is built with the random flip-and-noise transform meant for augmentation."""
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class RandomFlipNoise:
    def __call__(self, x):
        if torch.rand(()) < 0.5:
            x = x.flip(-1)
        return x + 0.1 * torch.randn_like(x)


class Signals(Dataset):
    def __init__(self, n, transform=None, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.x = torch.randn(n, 16, generator=g)
        self.y = (self.x[:, 0] > 0).long()
        self.transform = transform

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        x = self.x[i]
        return (self.transform(x) if self.transform else x), self.y[i]


augment = RandomFlipNoise()
train_loader = DataLoader(Signals(64), batch_size=16, shuffle=True)
val_loader = DataLoader(Signals(32, augment, seed=1), batch_size=16)  # runtime: TW405
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(2):
    model.train()
    for x, y in train_loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        correct = sum((model(x).argmax(1) == y).sum().item() for x, y in val_loader)
    print(epoch, correct / 32)
