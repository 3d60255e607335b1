"""Accumulation in a trainer class: unscale_ then clip inside the step branch."""
import torch
from torch import nn


class AmpTrainer:
    def __init__(self, model, accum_steps=2):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        self.scaler = torch.amp.GradScaler("cpu")
        self.accum_steps = accum_steps

    def fit(self, batches, epochs):
        self.model.train()
        for epoch in range(epochs):
            for i, j in enumerate(torch.randperm(len(batches)).tolist()):
                batch = batches[j]
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    logits = self.model(batch["features"])
                loss = nn.functional.cross_entropy(logits.float(), batch["label"]) / self.accum_steps
                self.scaler.scale(loss).backward()
                if (i + 1) % self.accum_steps == 0:
                    self.scaler.unscale_(self.optimizer)
                    nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
                    self.scaler.step(self.optimizer)
                    self.scaler.update()
                    self.optimizer.zero_grad()
            print(epoch, loss.item())


torch.manual_seed(0)
batches = [{"features": torch.randn(4, 8), "label": torch.randint(0, 3, (4,))} for _ in range(4)]
AmpTrainer(nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))).fit(batches, 2)
