"""LBFGS: the closure zeroes, computes the loss and calls backward."""
import torch
from torch import nn

torch.manual_seed(0)
X = torch.randn(32, 3)
Y = X @ torch.tensor([[1.0], [-2.0], [0.5]]) + 0.1
model = nn.Linear(3, 1)
optimizer = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=5)
criterion = nn.MSELoss()

for epoch in range(3):
    def closure():
        optimizer.zero_grad()
        loss = criterion(model(X), Y)
        loss.backward()
        return loss

    loss = optimizer.step(closure)
    print(epoch, loss.item())
