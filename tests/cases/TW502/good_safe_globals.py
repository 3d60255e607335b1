"""A checkpoint that holds the run's argparse.Namespace, loaded inside torch.serialization.safe_globals:
the code asked for weights-only loading with one extra allowed class, so a bare torch.load is not TW502."""
import argparse
import io

import torch
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=0.05)
args = parser.parse_args([])

torch.manual_seed(0)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
X = torch.randn(16, 4)
Y = X.sum(1, keepdim=True)
for step in range(5):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(X), Y)
    loss.backward()
    optimizer.step()

buffer = io.BytesIO()
torch.save({"model": model.state_dict(), "args": args}, buffer)
buffer.seek(0)
with torch.serialization.safe_globals([argparse.Namespace]):
    state = torch.load(buffer, map_location="cpu")
model.load_state_dict(state["model"])
print("resumed with lr", state["args"].lr)
