# case: static-only
"""TW503: a trainer copies predictions to NumPy on every step to track accuracy."""
import numpy as np
import torch
from torch import nn


class Trainer:
    def __init__(self, model):
        self.device = torch.device("cuda")
        self.model = model.to(self.device)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.05)

    def fit(self, batches, epochs=2):
        self.model.train()
        for epoch in range(epochs):
            hits = []
            for batch in batches:
                x, y = batch["x"].to(self.device), batch["y"].to(self.device)
                self.optimizer.zero_grad()
                logits = self.model(x)
                loss = nn.functional.cross_entropy(logits, y)
                loss.backward()
                self.optimizer.step()
                preds = logits.argmax(1).cpu().numpy()  # error: TW503
                hits.append(preds == batch["y"].numpy())
            print(epoch, np.concatenate(hits).mean())


torch.manual_seed(0)
batches = [{"x": torch.randn(32, 16), "y": torch.randint(0, 4, (32,))} for _ in range(8)]
Trainer(nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 4))).fit(batches)
