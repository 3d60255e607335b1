"""TW103: clipping after optimizer.step() is too late: the step already used the raw gradients."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def train_one_epoch(model, loader, optimizer):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        nn.utils.clip_grad_norm_(model.parameters(), 0.5)  # error: TW103
    return loss.item()


torch.manual_seed(0)
ds = TensorDataset(torch.randn(32, 8), torch.randint(0, 4, (32,)))
loader = DataLoader(ds, batch_size=8, shuffle=True, generator=torch.Generator().manual_seed(0))
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(2):
    print(epoch, train_one_epoch(model, loader, optimizer))
