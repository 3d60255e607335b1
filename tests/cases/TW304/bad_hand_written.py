"""TW304: a hand-written squared error between [32, 1] predictions and [32] targets: no warning at all."""
import torch
from torch import nn

torch.manual_seed(0)
features = torch.randn(256, 6)
targets = features[:, 0] * 2 - features[:, 1]
model = nn.Linear(6, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

for epoch in range(4):
    for i in range(0, 256, 32):
        pred = model(features[i:i + 32])
        target = targets[i:i + 32]
        loss = ((pred - target) ** 2).mean()  # static: TW304
        optimizer.zero_grad()
        loss.backward()  # runtime: TW304
        optimizer.step()
