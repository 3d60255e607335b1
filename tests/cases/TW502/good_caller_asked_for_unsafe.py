"""A loader whose unsafe fallbacks run only when its caller passed weights_only=False: the caller
decides (weights_only=weights_only), and the bare call for old PyTorch sits under `if not weights_only:`."""
import io

import torch
from torch import nn


def load_checkpoint(source, weights_only=True):
    try:
        return torch.load(source, map_location="cpu", weights_only=weights_only)
    except TypeError:  # a PyTorch without the weights_only argument
        if not weights_only:
            source.seek(0)
            return torch.load(source, map_location="cpu")
        raise


def load_trusted(source, weights_only=True):
    if weights_only:
        return torch.load(source, weights_only=True)
    return torch.load(source, weights_only=False) if source else None


def load_legacy(source, weights_only: bool = True):
    if weights_only is False:
        return torch.load(source, weights_only=False)
    return torch.load(source, weights_only=True)


torch.manual_seed(0)
model = nn.Linear(3, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
X, Y = torch.randn(12, 3), torch.randint(0, 2, (12,))
for step in range(4):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(X), Y)
    loss.backward()
    optimizer.step()

for loader in (load_checkpoint, load_trusted, load_legacy):
    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    buffer.seek(0)
    model.load_state_dict(loader(buffer))
print("loaded", sorted(model.state_dict()))
