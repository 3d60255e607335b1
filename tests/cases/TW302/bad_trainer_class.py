"""TW302: a trainer reports sum(batch_losses) / len(batch_losses) with a ragged last batch."""
import torch
from torch import nn


class Trainer:
    def __init__(self, model, batch_size=8):
        self.model = model
        self.batch_size = batch_size
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

    def train_epoch(self, X, Y):
        self.model.train()
        batch_losses = []
        perm = torch.randperm(len(X))
        for start in range(0, len(X), self.batch_size):
            idx = perm[start:start + self.batch_size]
            self.optimizer.zero_grad()
            loss = nn.functional.mse_loss(self.model(X[idx]), Y[idx])
            loss.backward()
            self.optimizer.step()
            batch_losses.append(loss.item())
        return sum(batch_losses) / len(batch_losses)  # error: TW302


torch.manual_seed(0)
X = torch.randn(27, 4)
Y = X.sum(1, keepdim=True)
trainer = Trainer(nn.Linear(4, 1))
for epoch in range(3):
    print(epoch, trainer.train_epoch(X, Y))
