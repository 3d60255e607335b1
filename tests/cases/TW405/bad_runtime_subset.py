# case: runtime-only
"""TW405: random_split keeps one dataset with a random crop transform for both splits; the validation Subset crops at random."""
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, random_split


def random_crop(x, size=12):
    start = int(torch.randint(0, x.shape[-1] - size + 1, ()))
    return x[..., start:start + size]


class Series(Dataset):
    def __init__(self, transform):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(80, 20, generator=g)
        self.transform = transform

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.transform(self.x[i]), self.x[i].mean()


train_set, val_set = random_split(Series(random_crop), [60, 20], generator=torch.Generator().manual_seed(0))
train_loader = DataLoader(train_set, batch_size=10, shuffle=True)
val_loader = DataLoader(val_set, batch_size=10)  # runtime: TW405
model = nn.Linear(12, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)


@torch.no_grad()
def evaluate():
    model.eval()
    errors = [nn.functional.mse_loss(model(x).squeeze(-1), y, reduction="sum").item() for x, y in val_loader]
    model.train()
    return sum(errors) / len(val_set)


for epoch in range(3):
    for x, y in train_loader:
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x).squeeze(-1), y).backward()
        optimizer.step()
    print(epoch, evaluate())
