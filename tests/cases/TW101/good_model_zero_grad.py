"""model.zero_grad() inside a trainer class method."""
import torch
from torch import nn


class Trainer:
    def __init__(self, model, lr=0.01):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
        self.loss_fn = nn.MSELoss()

    def training_step(self, x, target):
        self.model.zero_grad()
        loss = self.loss_fn(self.model(x), target)
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def fit(self, X, Y, epochs=3, batch_size=8):
        self.model.train()
        for epoch in range(epochs):
            perm = torch.randperm(len(X))
            total = 0.0
            for start in range(0, len(X), batch_size):
                idx = perm[start:start + batch_size]
                total += self.training_step(X[idx], Y[idx]) * len(idx)
            print(f"epoch {epoch} mse {total / len(X):.4f}")


torch.manual_seed(0)
X = torch.randn(32, 4)
Y = X @ torch.randn(4, 1)
Trainer(nn.Linear(4, 1)).fit(X, Y)
