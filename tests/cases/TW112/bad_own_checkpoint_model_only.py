"""TW112: the script writes its own checkpoint with the optimizer's state, and after a restart it continues
training from that checkpoint, but it loads back only the model: the momentum buffers restart from zero."""
import io

import torch
from torch import nn

torch.manual_seed(0)
x = torch.randn(32, 6)
y = (x[:, 0] > 0).long()
store = io.BytesIO()


def build():
    model = nn.Sequential(nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    return model, optimizer


def train_epoch(model, optimizer):
    for i in range(0, len(x), 8):
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x[i:i + 8]), y[i:i + 8]).backward()
        optimizer.step()


model, optimizer = build()
for epoch in range(2):
    train_epoch(model, optimizer)
torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, store)
store.seek(0)

model, optimizer = build()  # as a new process would, after a restart
checkpoint = torch.load(store, weights_only=True)  # runtime: TW112
model.load_state_dict(checkpoint["model"])  # static: TW112
for epoch in range(2, 4):
    train_epoch(model, optimizer)
