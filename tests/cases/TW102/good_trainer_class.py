"""Trainer method: zero_grad first, then backward, clip and step."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Trainer:
    def __init__(self, model, loader):
        self.model = model
        self.loader = loader
        self.opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def step(self, x, y):
        self.opt.zero_grad()
        loss = nn.functional.mse_loss(self.model(x), y)
        loss.backward()
        nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.opt.step()
        return loss.item()

    def train(self, epochs):
        self.model.train()
        for epoch in range(epochs):
            for x, y in self.loader:
                last = self.step(x, y)
            print(epoch, last)


torch.manual_seed(0)
X = torch.randn(24, 4)
ds = TensorDataset(X, X.sum(1, keepdim=True))
loader = DataLoader(ds, batch_size=6, shuffle=True, generator=torch.Generator().manual_seed(0))
Trainer(nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1)), loader).train(2)
