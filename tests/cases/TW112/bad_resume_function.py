"""TW112: resume() reads a full checkpoint but only the weights go back in; RMSprop restarts its averages."""
import io

import torch
from torch import nn


def resume(source, model):
    checkpoint = torch.load(source, weights_only=True)  # runtime: TW112
    model.load_state_dict(checkpoint["weights"])  # static: TW112
    return checkpoint["epoch"]


def run_epoch(model, optimizer, data):
    for x, y in data:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()


torch.manual_seed(0)
data = [(torch.randn(8, 5), torch.randint(0, 3, (8,))) for _ in range(4)]
model = nn.Linear(5, 3)
optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3)
run_epoch(model, optimizer, data)
buffer = io.BytesIO()
torch.save({"weights": model.state_dict(), "optim": optimizer.state_dict(), "epoch": 1}, buffer)
buffer.seek(0)

model = nn.Linear(5, 3)
optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3)
for epoch in range(resume(buffer, model), 3):
    run_epoch(model, optimizer, data)
