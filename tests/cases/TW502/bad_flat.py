"""TW502: torch.load(weights_only=False) unpickles whatever the checkpoint file contains."""
import io

import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
X, Y = torch.randn(32, 8), torch.randint(0, 2, (32,))

checkpoint = io.BytesIO()
for epoch in range(2):
    perm = torch.randperm(32)
    for start in range(0, 32, 8):
        idx = perm[start:start + 8]
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(X[idx]), Y[idx])
        loss.backward()
        optimizer.step()
    checkpoint.seek(0)
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}, checkpoint)

checkpoint.seek(0)
state = torch.load(checkpoint, weights_only=False)  # error: TW502
model.load_state_dict(state["model"])
optimizer.load_state_dict(state["optimizer"])
print("resumed after epoch", state["epoch"])
