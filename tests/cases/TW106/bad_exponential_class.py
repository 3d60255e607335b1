"""TW106: ExponentialLR(gamma=0.9) stepped in the per-batch training_step of a trainer class."""
import torch
from torch import nn
from torch.optim.lr_scheduler import ExponentialLR


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        self.scheduler = ExponentialLR(self.optimizer, gamma=0.9)

    def training_step(self, batch):
        self.optimizer.zero_grad()
        loss = nn.functional.cross_entropy(self.model(batch["x"]), batch["y"])
        loss.backward()
        self.optimizer.step()
        self.scheduler.step()  # error: TW106
        return loss.item()

    def fit(self, batches, epochs):
        self.model.train()
        for epoch in range(epochs):
            for i in torch.randperm(len(batches)).tolist():
                loss = self.training_step(batches[i])
            print(epoch, loss, self.scheduler.get_last_lr())


torch.manual_seed(0)
batches = [{"x": torch.randn(8, 8), "y": torch.randint(0, 3, (8,))} for _ in range(5)]
Trainer(nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))).fit(batches, 3)
