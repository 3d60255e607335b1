"""TW403: train_one_epoch moves the targets to the device but forgets the inputs."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def train_one_epoch(model, loader, optimizer, device):
    model.train()
    for inputs, targets in loader:
        targets = targets.to(device)
        optimizer.zero_grad()
        preds = model(inputs)  # static: TW403
        loss = nn.functional.mse_loss(preds, targets)
        loss.backward()
        optimizer.step()
    return loss.item()


torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
X = torch.randn(32, 6)
loader = DataLoader(TensorDataset(X, X.sum(1, keepdim=True)), batch_size=8, shuffle=True,
                    generator=torch.Generator().manual_seed(0))
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
model.to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(2):
    print(epoch, train_one_epoch(model, loader, optimizer, device))
