"""TW502: a trainer's resume() loads with weights_only=False."""
import io

import torch
from torch import nn


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
        self.epoch = 0

    def state_bytes(self):
        buffer = io.BytesIO()
        torch.save({"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(), "epoch": self.epoch}, buffer)
        return buffer.getvalue()

    def resume(self, blob):
        state = torch.load(io.BytesIO(blob), map_location="cpu", weights_only=False)  # error: TW502
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.epoch = state["epoch"]

    def train_epoch(self, batches):
        self.model.train()
        for i in torch.randperm(len(batches)).tolist():
            self.optimizer.zero_grad()
            loss = nn.functional.cross_entropy(self.model(batches[i]["x"]), batches[i]["y"])
            loss.backward()
            self.optimizer.step()
        self.epoch += 1
        return loss.item()


torch.manual_seed(0)
batches = [{"x": torch.randn(8, 6), "y": torch.randint(0, 3, (8,))} for _ in range(4)]
trainer = Trainer(nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3)))
print(trainer.train_epoch(batches))
blob = trainer.state_bytes()
trainer.resume(blob)
print(trainer.epoch, trainer.train_epoch(batches))
