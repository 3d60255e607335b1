"""TW602: a running statistic built from live outputs chains every step's graph into the next."""
import torch
from torch import nn


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
        self.output_ema = torch.zeros(2)

    def training_step(self, x, y):
        self.optimizer.zero_grad()
        logits = self.model(x)
        loss = nn.functional.cross_entropy(logits, y)
        loss.backward()
        self.optimizer.step()
        self.output_ema = 0.9 * self.output_ema + 0.1 * logits.mean(0)  # runtime: TW602
        return loss.item()

    def fit(self, X, Y, epochs=3):
        self.model.train()
        for epoch in range(epochs):
            perm = torch.randperm(len(X))
            for start in range(0, len(X), 4):
                idx = perm[start:start + 4]
                loss = self.training_step(X[idx], Y[idx])
            print(epoch, loss, self.output_ema.tolist())


torch.manual_seed(0)
Trainer(nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))).fit(torch.randn(32, 8), torch.randint(0, 2, (32,)))
