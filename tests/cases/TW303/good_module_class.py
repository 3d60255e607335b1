"""The classic MNIST-example shape: forward() returns F.log_softmax, trained with NLLLoss."""
import torch
import torch.nn.functional as F
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=1)


class Trainer:
    def __init__(self, model):
        self.model = model
        self.criterion = nn.NLLLoss()
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def fit(self, X, Y, epochs=3):
        self.model.train()
        for epoch in range(epochs):
            perm = torch.randperm(len(X))
            for start in range(0, len(X), 8):
                idx = perm[start:start + 8]
                self.optimizer.zero_grad()
                loss = self.criterion(self.model(X[idx]), Y[idx])
                loss.backward()
                self.optimizer.step()
            print(epoch, loss.item())


torch.manual_seed(0)
Trainer(Net()).fit(torch.randn(32, 6), torch.randint(0, 3, (32,)))
