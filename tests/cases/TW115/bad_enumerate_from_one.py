"""TW115: `enumerate(loader, 1)` with `i % grad_accum == 0`, under a GradScaler, in a trainer class."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Trainer:
    def __init__(self, model, loader, grad_accum):
        self.model = model
        self.loader = loader
        self.grad_accum = grad_accum
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        self.scaler = torch.amp.GradScaler("cpu")

    def fit(self, epochs):
        for epoch in range(epochs):
            self.model.train()
            for i, (x, y) in enumerate(self.loader, 1):
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    loss = nn.functional.cross_entropy(self.model(x), y)
                self.scaler.scale(loss / self.grad_accum).backward()
                if i % self.grad_accum == 0:  # static: TW115
                    self.scaler.step(self.optimizer)  # runtime: TW115
                    self.scaler.update()
                    self.optimizer.zero_grad(set_to_none=True)


if __name__ == "__main__":
    torch.manual_seed(0)
    dataset = TensorDataset(torch.randn(70, 12), torch.randint(0, 3, (70,)))
    Trainer(nn.Linear(12, 3), DataLoader(dataset, batch_size=16, shuffle=True), grad_accum=2).fit(2)
