"""TW306: one `loader_kwargs` dict (drop_last=True for the BatchNorm layers) is spread into the training and the
validation loader alike; validation is a one-line sum under no_grad."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
loader_kwargs = dict(batch_size=32, num_workers=0, drop_last=True)
train_loader = DataLoader(TensorDataset(torch.randn(128, 10), torch.randint(0, 2, (128,))), shuffle=True, **loader_kwargs)
val_loader = DataLoader(TensorDataset(torch.randn(70, 10), torch.randint(0, 2, (70,))), **loader_kwargs)  # error: TW306
model = nn.Sequential(nn.Linear(10, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for epoch in range(2):
    model.train()
    for x, y in train_loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        correct = sum((model(x).argmax(1) == y).sum().item() for x, y in val_loader)
    print(epoch, correct / 70)
