"""Correct: a module of model and training functions with no program of its own: whoever runs it seeds."""
import torch
from torch import nn


class Regressor(nn.Module):
    def __init__(self, width=8):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, width), nn.ReLU(), nn.Linear(width, 1))

    def forward(self, x):
        return self.net(x)


def train(model, batches, epochs=1, lr=1e-2):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for epoch in range(epochs):
        for x, y in batches:
            optimizer.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
    return model
