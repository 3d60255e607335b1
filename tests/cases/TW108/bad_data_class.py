"""TW108: a trainer computes the loss on `.data` of the logits: nothing flows back."""
import torch
from torch import nn


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def training_step(self, batch):
        self.optimizer.zero_grad()
        logits = self.model(batch["x"])
        loss = nn.functional.cross_entropy(logits.data, batch["y"]).requires_grad_()
        loss.backward()  # error: TW108
        self.optimizer.step()
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
