"""TW304: a local MLP ends in Linear(32, 1); the targets come out of a matrix product as [N]: MSE over an N x N grid."""
import torch
import torch.nn.functional as F
from torch import nn


class MLP(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.hidden = nn.Linear(d, 32)
        self.head = nn.Linear(32, 1)

    def forward(self, x):
        return self.head(F.relu(self.hidden(x)))


torch.manual_seed(0)
X = torch.randn(200, 5)
true_w = torch.randn(5)
y = X @ true_w + 0.1 * torch.randn(200)
model = MLP(5)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
criterion = nn.MSELoss()
for epoch in range(50):
    optimizer.zero_grad()
    loss = criterion(model(X), y)  # error: TW304
    loss.backward()
    optimizer.step()
