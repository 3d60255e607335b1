"""LambdaLR linear warmup over steps, stepped per batch in a trainer class."""
import torch
from torch import nn
from torch.optim.lr_scheduler import LambdaLR


class Trainer:
    def __init__(self, model, warmup_steps=6):
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
        self.scheduler = LambdaLR(self.optimizer, lambda step: min(1.0, (step + 1) / warmup_steps))

    def training_step(self, batch):
        self.optimizer.zero_grad()
        loss = nn.functional.cross_entropy(self.model(batch["x"]), batch["y"])
        loss.backward()
        self.optimizer.step()
        self.scheduler.step()
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
