"""TW504: LBFGS steps with a closure that runs backward; NumPy is seeded, torch is not, so the model's initial
weights differ from run to run."""
import numpy as np
import torch
from torch import nn


class Sequence(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.LSTMCell(1, 8)
        self.out = nn.Linear(8, 1)

    def forward(self, x):
        h, _ = self.cell(x)
        return self.out(h)


np.random.seed(0)
inputs = torch.from_numpy(np.sin(np.linspace(0, 6, 40)).astype("float32")).unsqueeze(1)
targets = inputs.roll(-1, 0)
seq = Sequence()  # static: TW504
criterion = nn.MSELoss()
optimizer = torch.optim.LBFGS(seq.parameters(), lr=0.5)
for i in range(3):
    def closure():
        optimizer.zero_grad()
        loss = criterion(seq(inputs), targets)
        loss.backward()
        return loss
    optimizer.step(closure)
