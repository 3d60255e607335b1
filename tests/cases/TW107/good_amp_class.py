"""AMP trainer class dividing the loss before scaling it."""
import torch
from torch import nn


class AccumTrainer:
    def __init__(self, model, accum=2):
        self.model = model
        self.accum = accum
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
        self.scaler = torch.amp.GradScaler("cpu")

    def fit(self, X, Y, epochs=2, batch_size=4):
        self.model.train()
        for epoch in range(epochs):
            perm = torch.randperm(len(X))
            for i, start in enumerate(range(0, len(X), batch_size)):
                idx = perm[start:start + batch_size]
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    loss = nn.functional.mse_loss(self.model(X[idx]).float(), Y[idx])
                    loss = loss / self.accum
                self.scaler.scale(loss).backward()
                if (i + 1) % self.accum == 0:
                    self.scaler.step(self.optimizer)
                    self.scaler.update()
                    self.optimizer.zero_grad()
            print(epoch, loss.item())


torch.manual_seed(0)
X = torch.randn(32, 6)
AccumTrainer(nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))).fit(X, X.sum(1, keepdim=True))
