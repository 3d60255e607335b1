"""Two parameter groups (small LR for the encoder, larger for the head) cover every parameter."""
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        return self.head(self.encoder(x))


torch.manual_seed(0)
model = Net()
optimizer = torch.optim.Adam([
    {"params": model.encoder.parameters(), "lr": 1e-4},
    {"params": model.head.parameters(), "lr": 1e-3},
])
X, Y = torch.randn(32, 8), torch.randint(0, 3, (32,))

for epoch in range(2):
    model.train()
    perm = torch.randperm(32)
    for start in range(0, 32, 8):
        idx = perm[start:start + 8]
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(X[idx]), Y[idx])
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
