"""TW403: a trainer moves its model to self.device but feeds batch["input_ids"] as it comes."""
import torch
from torch import nn


class Trainer:
    def __init__(self, model, device):
        self.device = device
        self.model = model.to(device)
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=1e-3)

    def training_step(self, batch):
        labels = batch["labels"].to(self.device)
        self.optimizer.zero_grad()
        logits = self.model(batch["input_ids"]).mean(dim=1)  # static: TW403
        loss = nn.functional.cross_entropy(logits, labels)
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def fit(self, batches, epochs=2):
        self.model.train()
        for epoch in range(epochs):
            for i in torch.randperm(len(batches)).tolist():
                loss = self.training_step(batches[i])
            print(epoch, loss)


torch.manual_seed(0)
device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
batches = [{"input_ids": torch.randint(0, 30, (4, 5)), "labels": torch.randint(0, 2, (4,))} for _ in range(4)]
Trainer(nn.Sequential(nn.Embedding(30, 16), nn.Linear(16, 2)), device).fit(batches)
