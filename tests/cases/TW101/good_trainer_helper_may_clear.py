# case: static-only
"""Correct as far as the checker can tell: the trainer hands its model to a helper object built in `__init__`
(`self.hooks = GradHooks(model)`, a class the checker cannot see), whose `after_step()` may clear the gradients."""
import torch
from gradhooks import GradHooks
from torch import nn


class Trainer:
    def __init__(self, model, lr=0.01):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
        self.hooks = GradHooks(model)

    def fit(self, X, Y, epochs=3, batch_size=8):
        for epoch in range(epochs):
            for start in range(0, len(X), batch_size):
                loss = nn.functional.mse_loss(self.model(X[start:start + batch_size]), Y[start:start + batch_size])
                loss.backward()
                self.optimizer.step()
                self.hooks.after_step()


torch.manual_seed(0)
X = torch.randn(32, 4)
Y = X @ torch.randn(4, 1)
Trainer(nn.Linear(4, 1)).fit(X, Y)
