"""The batch is moved inside the DataLoader's collate_fn."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.dataloader import default_collate

device = "cuda" if torch.cuda.is_available() else "cpu"


def collate_to_device(samples):
    x, y = default_collate(samples)
    return x.to(device), y.to(device)


def train_one_epoch(model, loader, optimizer):
    model.train()
    for inputs, targets in loader:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(inputs), targets)
        loss.backward()
        optimizer.step()
    return loss.item()


torch.manual_seed(0)
X = torch.randn(32, 6)
loader = DataLoader(TensorDataset(X, X.sum(1, keepdim=True)), batch_size=8, shuffle=True,
                    collate_fn=collate_to_device, generator=torch.Generator().manual_seed(0))
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1)).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(2):
    print(epoch, train_one_epoch(model, loader, optimizer))
