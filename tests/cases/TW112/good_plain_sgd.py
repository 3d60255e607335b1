"""Correct: plain SGD without momentum and without a scheduler keeps no state: the model is all there is to resume."""
import io

import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
store = io.BytesIO()
torch.save({"model": model.state_dict(), "step": 100}, store)
store.seek(0)
ckpt = torch.load(store, weights_only=True)
model.load_state_dict(ckpt["model"])
start = ckpt["step"]
for step in range(start, start + 10):
    x = torch.randn(8, 4)
    optimizer.zero_grad()
    nn.functional.mse_loss(model(x), x[:, :1]).backward()
    optimizer.step()
