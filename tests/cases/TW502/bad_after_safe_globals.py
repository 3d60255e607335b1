"""TW502: safe_globals covers only the loads inside its `with` block; the second bare load after it
unpickles anything on PyTorch < 2.6."""
import argparse
import io

import torch
from torch import nn


def published(obj):
    """Stands for files another run published: this script reads them, it did not write them."""
    file = io.BytesIO()
    torch.save(obj, file)
    file.seek(0)
    return file


args = argparse.Namespace(lr=0.05, epochs=2)
torch.manual_seed(0)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
X = torch.randn(16, 4)
Y = X.sum(1, keepdim=True)
for epoch in range(args.epochs):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(X), Y)
    loss.backward()
    optimizer.step()

run_file, weights_file = published({"args": args}), published(model.state_dict())
with torch.serialization.safe_globals([argparse.Namespace]):
    state = torch.load(run_file)
weights = torch.load(weights_file)  # bare: unsafe before 2.6, safe on this PyTorch  # static: TW502
model.load_state_dict(weights)
print("resumed with lr", state["args"].lr)
