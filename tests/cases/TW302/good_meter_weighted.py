"""An averager updated with each batch's size, and an accuracy over samples (`correct / total` with
`total += y.size(0)`): both weigh every sample once."""
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
    correct, total = 0, 0
    for x, y in loader:
        optimizer.zero_grad()
        out = model(x)
        loss = nn.functional.cross_entropy(out, y)
        loss.backward()
        optimizer.step()
        losses.update(loss.item(), x.size(0))
        correct += (out.argmax(1) == y).sum().item()
        total += y.size(0)
    print(epoch, losses.avg, correct / total)
