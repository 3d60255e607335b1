"""Training logits collected with .detach() for an epoch-end metric."""
import torch
from torch import nn


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
        self.epoch_logits = []
        self.epoch_labels = []

    def training_step(self, batch):
        self.optimizer.zero_grad()
        logits = self.model(batch["x"])
        loss = nn.functional.cross_entropy(logits, batch["y"])
        loss.backward()
        self.optimizer.step()
        self.epoch_logits.append(logits.detach())
        self.epoch_labels.append(batch["y"])

    def fit(self, batches, epochs=2):
        self.model.train()
        for epoch in range(epochs):
            for i in torch.randperm(len(batches)).tolist():
                self.training_step(batches[i])
            preds = torch.cat(self.epoch_logits).argmax(1)
            acc = (preds == torch.cat(self.epoch_labels)).float().mean().item()
            self.epoch_logits, self.epoch_labels = [], []
            print(epoch, acc)


torch.manual_seed(0)
batches = [{"x": torch.randn(8, 6), "y": torch.randint(0, 3, (8,))} for _ in range(4)]
Trainer(nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))).fit(batches)
