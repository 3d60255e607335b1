"""TW603: an auxiliary head is built and optimized but forward() never uses it."""
import torch
from torch import nn


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(6, 16), nn.ReLU())
        self.main_head = nn.Linear(16, 2)
        self.aux_head = nn.Linear(16, 1)

    def forward(self, x):
        return self.main_head(self.trunk(x))


def train_one_epoch(model, X, Y, optimizer):
    model.train()
    perm = torch.randperm(len(X))
    for start in range(0, len(X), 8):
        idx = perm[start:start + 8]
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(X[idx]), Y[idx])
        loss.backward()
        optimizer.step()  # runtime: TW603
    return loss.item()


torch.manual_seed(0)
model = TwoHeads()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
X, Y = torch.randn(32, 6), torch.randint(0, 2, (32,))
for epoch in range(2):
    print(epoch, train_one_epoch(model, X, Y, optimizer))
