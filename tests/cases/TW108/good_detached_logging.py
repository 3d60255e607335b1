"""Detached copies of the outputs feed the metrics only; the loss uses the live outputs."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def train_one_epoch(model, loader, optimizer):
    model.train()
    abs_err, n = 0.0, 0
    for x, y in loader:
        optimizer.zero_grad()
        pred = model(x)
        loss = nn.functional.mse_loss(pred, y)
        loss.backward()
        optimizer.step()
        abs_err += (pred.detach() - y).abs().sum().item()
        n += len(y)
    return abs_err / n


torch.manual_seed(0)
X = torch.randn(32, 4)
loader = DataLoader(TensorDataset(X, X.sum(1, keepdim=True)), batch_size=8, shuffle=True,
                    generator=torch.Generator().manual_seed(0))
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(2):
    print(epoch, train_one_epoch(model, loader, optimizer))
