"""TW201: a callback registered with `trainer.set_callback("on_batch_end", fn)` switches the script's `model` to eval
mode; the trainer holds that same object as `self.model`, and nothing switches it back: from the second batch on,
BatchNorm trains on frozen statistics."""
import torch
from torch import nn


class Trainer:
    def __init__(self, model, optimizer, batches):
        self.model = model
        self.optimizer = optimizer
        self.batches = batches
        self.callbacks = {}

    def set_callback(self, event, fn):
        self.callbacks[event] = fn

    def run(self, epochs):
        for epoch in range(epochs):
            for x, y in self.batches:
                loss = nn.functional.cross_entropy(self.model(x), y)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                self.callbacks["on_batch_end"](self)


def log_validation(trainer):
    model.eval()  # error: TW201
    with torch.no_grad():
        print(nn.functional.cross_entropy(model(VAL[0]), VAL[1]).item())


torch.manual_seed(0)
VAL = (torch.randn(4, 6), torch.randint(0, 2, (4,)))
model = nn.Sequential(nn.Linear(6, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
trainer = Trainer(model, optimizer, [(torch.randn(8, 6), torch.randint(0, 2, (8,))) for _ in range(3)])
trainer.set_callback("on_batch_end", log_validation)
trainer.run(2)
