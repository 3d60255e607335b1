"""prepare_data() splits first and normalises with the training rows' statistics."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def prepare_data(X, Y, n_train=32):
    perm = torch.randperm(len(X), generator=torch.Generator().manual_seed(0))
    X_train, X_val = X[perm[:n_train]], X[perm[n_train:]]
    mu, sigma = X_train.mean(0, keepdim=True), X_train.std(0, keepdim=True)
    return (
        TensorDataset((X_train - mu) / sigma, Y[perm[:n_train]]),
        TensorDataset((X_val - mu) / sigma, Y[perm[n_train:]]),
    )


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
