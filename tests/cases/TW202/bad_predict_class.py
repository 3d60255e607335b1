"""TW202: a classifier wrapper predicts under inference_mode but in training mode."""
import torch
from torch import nn


class Classifier:
    def __init__(self):
        self.net = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 2))
        self.optimizer = torch.optim.AdamW(self.net.parameters(), lr=1e-3)

    def fit(self, X, Y, epochs=3):
        self.net.train()
        for epoch in range(epochs):
            perm = torch.randperm(len(X))
            for start in range(0, len(X), 8):
                idx = perm[start:start + 8]
                self.optimizer.zero_grad()
                loss = nn.functional.cross_entropy(self.net(X[idx]), Y[idx])
                loss.backward()
                self.optimizer.step()
        return self

    def predict(self, X):
        with torch.inference_mode():
            return self.net(X).argmax(1)  # error: TW202


torch.manual_seed(0)
X, Y = torch.randn(40, 6), torch.randint(0, 2, (40,))
clf = Classifier().fit(X[:32], Y[:32])
print((clf.predict(X[32:]) == Y[32:]).float().mean().item())
