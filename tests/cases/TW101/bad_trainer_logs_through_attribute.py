"""TW101: the trainer logs each step through a logger it keeps in an attribute (`self.logger.info(...)`); a logger
built from a name cannot reach the optimizer, and the loop never clears the gradients."""
import logging

import torch
from torch import nn


class Trainer:
    def __init__(self, model, lr=0.01):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
        self.logger = logging.getLogger("train")

    def fit(self, X, Y, epochs=3, batch_size=8):
        for epoch in range(epochs):
            for start in range(0, len(X), batch_size):
                loss = nn.functional.mse_loss(self.model(X[start:start + batch_size]), Y[start:start + batch_size])
                self.logger.info("loss %.4f", loss.item())
                loss.backward()  # error: TW101
                self.optimizer.step()


torch.manual_seed(0)
X = torch.randn(32, 4)
Y = X @ torch.randn(4, 1)
Trainer(nn.Linear(4, 1)).fit(X, Y)
