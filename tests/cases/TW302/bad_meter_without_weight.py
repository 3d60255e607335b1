"""TW302: an averager whose update counts calls (its weight n left at 1) fed each batch's mean loss
(30 samples in batches of 8: the last batch of 6 weighs as much as a full one)."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class AverageMeter:
    def __init__(self):
        self.sum, self.count, self.avg = 0.0, 0, 0.0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


torch.manual_seed(0)
loader = DataLoader(TensorDataset(torch.randn(30, 8), torch.randint(0, 2, (30,))), batch_size=8, shuffle=True,
                    generator=torch.Generator().manual_seed(0))
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
for epoch in range(2):
    losses = AverageMeter()
    for x, y in loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.update(loss.item())  # error: TW302
    print(epoch, losses.avg)
