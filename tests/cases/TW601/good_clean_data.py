"""Missing values imputed with the training column means before training."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
X = torch.randn(32, 8)
X[13, 2] = float("nan")
col_means = X.nanmean(dim=0)
X = torch.where(torch.isnan(X), col_means.expand_as(X), X)
Y = torch.randint(0, 2, (32,))
loader = DataLoader(TensorDataset(X, Y), batch_size=8, shuffle=True, generator=torch.Generator().manual_seed(0))
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

for epoch in range(2):
    for x, y in loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
