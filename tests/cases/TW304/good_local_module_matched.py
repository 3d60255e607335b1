"""Correct: the same MLP, with targets kept as a column ([N, 1]) to match its output."""
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
true_w = torch.randn(5, 1)
y = X @ true_w + 0.1 * torch.randn(200, 1)
model = MLP(5)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
criterion = nn.MSELoss()
for epoch in range(50):
    optimizer.zero_grad()
    loss = criterion(model(X), y)
    loss.backward()
    optimizer.step()
