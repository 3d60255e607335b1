"""CosineAnnealingLR(T_max=3) over 3 epochs, stepped once per epoch after the batch loop: correct."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
X = torch.randn(40, 6)
loader = DataLoader(TensorDataset(X, X.sum(1, keepdim=True)), batch_size=8, shuffle=True,
                    generator=torch.Generator().manual_seed(0))
net = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=3)

for epoch in range(3):
    net.train()
    for inputs, targets in loader:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(net(inputs), targets)
        loss.backward()
        optimizer.step()
    scheduler.step()
    print(epoch, loss.item())
