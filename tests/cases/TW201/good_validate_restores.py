"""A trainer's validate() switches back with model.train() before returning."""
import torch
from torch import nn


class Trainer:
    def __init__(self, model, train_batches, val_batches):
        self.model = model
        self.train_batches = train_batches
        self.val_batches = val_batches
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def train_epoch(self):
        for i in torch.randperm(len(self.train_batches)).tolist():
            batch = self.train_batches[i]
            self.optimizer.zero_grad()
            loss = nn.functional.cross_entropy(self.model(batch["x"]), batch["y"])
            loss.backward()
            self.optimizer.step()
        return loss.item()

    def validate(self):
        self.model.eval()
        with torch.no_grad():
            correct = sum((self.model(b["x"]).argmax(1) == b["y"]).sum().item() for b in self.val_batches)
        self.model.train()
        return correct / sum(len(b["y"]) for b in self.val_batches)

    def fit(self, epochs):
        self.model.train()
        for epoch in range(epochs):
            print(epoch, self.train_epoch(), self.validate())


torch.manual_seed(0)
make = lambda: {"x": torch.randn(8, 6), "y": torch.randint(0, 2, (8,))}
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, 2))
Trainer(model, [make() for _ in range(4)], [make() for _ in range(2)]).fit(3)
