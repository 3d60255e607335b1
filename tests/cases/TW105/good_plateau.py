"""ReduceLROnPlateau stepped with the validation loss after each epoch."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
g = torch.Generator().manual_seed(0)
X = torch.randn(48, 8)
Y = X[:, :3].sum(1, keepdim=True)
train_loader = DataLoader(TensorDataset(X[:32], Y[:32]), batch_size=8, shuffle=True, generator=g)
val_loader = DataLoader(TensorDataset(X[32:], Y[32:]), batch_size=8)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5, patience=0)

for epoch in range(3):
    model.train()
    for x, y in train_loader:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
    model.eval()
    val_loss = 0.0
    with torch.no_grad():
        for x, y in val_loader:
            val_loss += nn.functional.mse_loss(model(x), y, reduction="sum").item()
    val_loss /= len(val_loader.dataset)
    scheduler.step(val_loss)
    print(epoch, val_loss, optimizer.param_groups[0]["lr"])
