"""TW106: CosineAnnealingLR sized in epochs (T_max=epochs) but stepped per batch."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def train_one_epoch(model, loader, optimizer, scheduler):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        scheduler.step()  # error: TW106
    return loss.item()


torch.manual_seed(0)
X = torch.randn(40, 6)
loader = DataLoader(TensorDataset(X, X.sum(1, keepdim=True)), batch_size=8, shuffle=True,
                    generator=torch.Generator().manual_seed(0))
num_epochs = 3
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=num_epochs)
for epoch in range(num_epochs):
    print(epoch, train_one_epoch(model, loader, optimizer, scheduler))
