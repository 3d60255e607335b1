"""TW109: the trainer trains a deep copy of the model made after the optimizer was built."""
import copy

import torch
from torch import nn


class Trainer:
    def __init__(self, model):
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        self.model = copy.deepcopy(model)  # static: TW109

    def training_step(self, batch):
        self.optimizer.zero_grad()
        loss = nn.functional.cross_entropy(self.model(batch["x"]), batch["y"])
        loss.backward()
        self.optimizer.step()  # runtime: TW109
        return loss.item()

    def fit(self, batches, epochs=2):
        self.model.train()
        for epoch in range(epochs):
            for i in torch.randperm(len(batches)).tolist():
                loss = self.training_step(batches[i])
            print(epoch, loss)


torch.manual_seed(0)
batches = [{"x": torch.randn(8, 6), "y": torch.randint(0, 3, (8,))} for _ in range(4)]
Trainer(nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))).fit(batches)
