"""TW306: a trainer class keeps a validation loader with drop_last=True and validates in eval mode each epoch."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Trainer:
    def __init__(self, model, train_set, val_set, batch_size=32):
        self.model = model
        self.optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        self.train_loader = DataLoader(train_set, batch_size=batch_size, shuffle=True)
        self.val_loader = DataLoader(val_set, batch_size=batch_size, drop_last=True)  # error: TW306

    def validate(self):
        self.model.eval()
        total = 0.0
        with torch.inference_mode():
            for x, y in self.val_loader:
                total += nn.functional.cross_entropy(self.model(x), y, reduction="sum").item()
        self.model.train()
        return total

    def train(self, epochs):
        for epoch in range(epochs):
            for x, y in self.train_loader:
                self.optimizer.zero_grad()
                nn.functional.cross_entropy(self.model(x), y).backward()
                self.optimizer.step()
            print(epoch, self.validate())


if __name__ == "__main__":
    torch.manual_seed(0)
    make = lambda n: TensorDataset(torch.randn(n, 6), torch.randint(0, 2, (n,)))
    Trainer(nn.Sequential(nn.Linear(6, 8), nn.Dropout(0.1), nn.Linear(8, 2)), make(64), make(45)).train(2)
