"""TW404: each sample is "decoded" in __getitem__ (simulated by a sleep) on the main process."""
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class SlowDecodeDataset(Dataset):
    def __init__(self, n=32):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 8, generator=g)
        self.y = (self.x[:, 0] > 0).long()

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        time.sleep(0.004)  # stands in for image decoding / augmentation
        return self.x[i], self.y[i]


torch.manual_seed(0)
loader = DataLoader(SlowDecodeDataset(), batch_size=8, shuffle=True, num_workers=0,
                    generator=torch.Generator().manual_seed(0))
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

for epoch in range(2):
    for x, y in loader:  # runtime: TW404
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
