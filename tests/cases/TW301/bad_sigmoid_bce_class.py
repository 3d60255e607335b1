"""TW301: sigmoid applied before BCEWithLogitsLoss, which applies its own sigmoid."""
import torch
from torch import nn


class BinaryTrainer:
    def __init__(self, model):
        self.model = model
        self.criterion = nn.BCEWithLogitsLoss()
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def training_step(self, x, y):
        self.optimizer.zero_grad()
        probs = torch.sigmoid(self.model(x))
        loss = self.criterion(probs, y)  # error: TW301
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def fit(self, X, Y, epochs=3):
        self.model.train()
        for epoch in range(epochs):
            perm = torch.randperm(len(X))
            for start in range(0, len(X), 8):
                idx = perm[start:start + 8]
                loss = self.training_step(X[idx], Y[idx])
            print(epoch, loss)


torch.manual_seed(0)
X = torch.randn(32, 6)
Y = (X[:, :1] > 0).float()
BinaryTrainer(nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))).fit(X, Y)
