"""nn.Module.__init__(self) called explicitly."""
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, hidden=16):
        nn.Module.__init__(self)
        self.fc1 = nn.Linear(8, hidden)
        self.fc2 = nn.Linear(hidden, 2)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


torch.manual_seed(0)
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
X, Y = torch.randn(32, 8), torch.randint(0, 2, (32,))
for epoch in range(2):
    perm = torch.randperm(32)
    for start in range(0, 32, 8):
        idx = perm[start:start + 8]
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(X[idx]), Y[idx])
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
