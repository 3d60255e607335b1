"""BCEWithLogitsLoss on raw logits; sigmoid only to threshold predictions."""
import torch
from torch import nn


class BinaryTrainer:
    def __init__(self, model):
        self.model = model
        self.criterion = nn.BCEWithLogitsLoss()
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def training_step(self, x, y):
        self.optimizer.zero_grad()
        logits = self.model(x)
        loss = self.criterion(logits, y)
        loss.backward()
        self.optimizer.step()
        correct = ((torch.sigmoid(logits.detach()) > 0.5).float() == y).sum().item()
        return loss.item(), correct

    def fit(self, X, Y, epochs=3):
        self.model.train()
        for epoch in range(epochs):
            perm = torch.randperm(len(X))
            correct = 0
            for start in range(0, len(X), 8):
                idx = perm[start:start + 8]
                loss, c = self.training_step(X[idx], Y[idx])
                correct += c
            print(epoch, loss, correct / len(X))


torch.manual_seed(0)
X = torch.randn(32, 6)
Y = (X[:, :1] > 0).float()
BinaryTrainer(nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))).fit(X, Y)
