"""TW402: a prepare_data() helper standardises with whole-dataset statistics before random_split."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, random_split


def prepare_data(X, Y):
    X = (X - X.mean(0, keepdim=True)) / X.std(0, keepdim=True)  # error: TW402
    full = TensorDataset(X, Y)
    return random_split(full, [32, 16], generator=torch.Generator().manual_seed(0))


def train_one_epoch(model, loader, optimizer):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
    return loss.item()


torch.manual_seed(0)
X = torch.randn(48, 6) * 10
train_set, val_set = prepare_data(X, X[:, :1] * 0.1)
loader = DataLoader(train_set, batch_size=8, shuffle=True, generator=torch.Generator().manual_seed(1))
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(2):
    print(epoch, train_one_epoch(model, loader, optimizer))
