# case: static-only
"""TW501: an __init__ that delegates to a build() helper and never initialises nn.Module."""
import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self, dims):  # error: TW501
        self.dims = dims
        self.build()

    def build(self):
        layers = []
        for d_in, d_out in zip(self.dims, self.dims[1:]):
            layers += [nn.Linear(d_in, d_out), nn.ReLU()]
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    def fit(self, X, Y, epochs=2):
        self.model.train()
        for epoch in range(epochs):
            perm = torch.randperm(len(X))
            for start in range(0, len(X), 8):
                idx = perm[start:start + 8]
                self.optimizer.zero_grad()
                loss = nn.functional.mse_loss(self.model(X[idx]), Y[idx])
                loss.backward()
                self.optimizer.step()
            print(epoch, loss.item())


torch.manual_seed(0)
X = torch.randn(32, 6)
Trainer(Encoder([6, 16, 1])).fit(X, X.sum(1, keepdim=True).relu())
