# case: static-only
"""The epoch loss is summed on the device and read once per epoch."""
import torch
from torch import nn


class Trainer:
    def __init__(self, model):
        self.device = torch.device("cuda")
        self.model = model.to(self.device)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.05)

    def fit(self, batches, epochs=2):
        self.model.train()
        for epoch in range(epochs):
            total = torch.zeros((), device=self.device)
            for batch in batches:
                x, y = batch["x"].to(self.device), batch["y"].to(self.device)
                self.optimizer.zero_grad()
                loss = nn.functional.cross_entropy(self.model(x), y)
                loss.backward()
                self.optimizer.step()
                total += loss.detach() * len(y)
            print(epoch, total.item() / sum(len(b["y"]) for b in batches))


torch.manual_seed(0)
batches = [{"x": torch.randn(32, 16), "y": torch.randint(0, 4, (32,))} for _ in range(8)]
Trainer(nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 4))).fit(batches)
