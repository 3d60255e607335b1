"""TW304: `fc(x).squeeze(1)` is [N] while the target was reshaped to [N, 1] with view(-1, 1): the loss broadcasts."""
import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
batch_size = 16
X, Y = torch.randn(64, 8), torch.randn(64)
loader = DataLoader(TensorDataset(X, Y), batch_size=batch_size, shuffle=True, generator=torch.Generator().manual_seed(0))
fc = nn.Linear(8, 1)
optimizer = torch.optim.SGD(fc.parameters(), lr=0.05)
for epoch in range(2):
    for x, y in loader:
        y = y.view(-1, 1)
        optimizer.zero_grad()
        loss = F.smooth_l1_loss(fc(x).squeeze(1), y)  # static: TW304
        loss.backward()  # runtime: TW304
        optimizer.step()
    print(epoch, loss.item())
