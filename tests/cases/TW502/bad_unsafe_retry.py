"""TW502: a weights-only load that falls back to weights_only=False on any failure: an untrusted
file that fails the safe load is then unpickled anyway."""
import io

import torch
from torch import nn


def load_checkpoint(source):
    try:
        return torch.load(source, map_location="cpu", weights_only=True)
    except Exception:
        source.seek(0)
        return torch.load(source, map_location="cpu", weights_only=False)  # the fallback never runs here  # static: TW502


def load_quiet(source, weights_only=True):
    if weights_only:  # the flag is true here: this branch is not the caller's request for an unsafe load
        return torch.load(source, weights_only=False)  # error: TW502
    return torch.load(source, weights_only=weights_only)


torch.manual_seed(0)
model = nn.Linear(3, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
X, Y = torch.randn(12, 3), torch.randint(0, 2, (12,))
for step in range(4):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(X), Y)
    loss.backward()
    optimizer.step()

buffer = io.BytesIO()
torch.save(model.state_dict(), buffer)
buffer.seek(0)
model.load_state_dict(load_checkpoint(buffer))
buffer.seek(0)
model.load_state_dict(load_quiet(buffer))
print("loaded", sorted(model.state_dict()))
