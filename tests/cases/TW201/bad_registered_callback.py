"""TW201: a validation callback registered by name on a small trainer switches the model to eval mode after every
batch and never back: from the second batch on, Dropout is off while training."""
import torch
from torch import nn


class Trainer:
    def __init__(self, model, batches):
        self.model = model
        self.batches = batches
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.callbacks = {}

    def set_callback(self, event, fn):
        self.callbacks[event] = fn

    def fit(self, epochs):
        for epoch in range(epochs):
            for x, y in self.batches:
                self.optimizer.zero_grad()
                nn.functional.cross_entropy(self.model(x), y).backward()
                self.optimizer.step()
                if "on_batch_end" in self.callbacks:
                    self.callbacks["on_batch_end"](self)


def validate(trainer):
    trainer.model.eval()  # error: TW201
    with torch.no_grad():
        print(trainer.model(VAL[0]).argmax(1).tolist())


torch.manual_seed(0)
VAL = (torch.randn(4, 6), torch.randint(0, 2, (4,)))
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 2))
trainer = Trainer(model, [(torch.randn(8, 6), torch.randint(0, 2, (8,))) for _ in range(3)])
trainer.model.train()
trainer.set_callback("on_batch_end", validate)
trainer.fit(2)
