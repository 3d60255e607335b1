"""Warmup LambdaLR stepped after the optimizer step, once per batch."""
import torch
from torch import nn
from torch.optim.lr_scheduler import LambdaLR


class Trainer:
    def __init__(self, model, warmup=4):
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
        self.scheduler = LambdaLR(self.optimizer, lambda s: min(1.0, (s + 1) / warmup))

    def training_step(self, batch):
        self.optimizer.zero_grad()
        logits = self.model(batch["input_ids"].float())
        loss = nn.functional.cross_entropy(logits, batch["labels"])
        loss.backward()
        self.optimizer.step()
        self.scheduler.step()
        return loss.item()

    def fit(self, batches, epochs):
        self.model.train()
        for epoch in range(epochs):
            for i in torch.randperm(len(batches)).tolist():
                loss = self.training_step(batches[i])
            print(epoch, loss)


torch.manual_seed(0)
batches = [{"input_ids": torch.randint(0, 5, (4, 6)), "labels": torch.randint(0, 2, (4,))} for _ in range(4)]
Trainer(nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 2))).fit(batches, 2)
