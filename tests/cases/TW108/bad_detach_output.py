"""TW108: model outputs detached (then made to require grad to silence the error)."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def train_one_epoch(model, loader, optimizer):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        pred = model(x).detach().requires_grad_()
        loss = nn.functional.mse_loss(pred, y)
        loss.backward()  # error: TW108
        optimizer.step()
    return loss.item()


torch.manual_seed(0)
X = torch.randn(32, 4)
loader = DataLoader(TensorDataset(X, X.sum(1, keepdim=True)), batch_size=8, shuffle=True,
                    generator=torch.Generator().manual_seed(0))
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(2):
    print(epoch, train_one_epoch(model, loader, optimizer))
