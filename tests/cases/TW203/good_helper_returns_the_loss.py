"""A helper that runs the model and returns the loss it backpropagates is training, not evaluation; one that
stores the outputs in a list read back by the loss is too."""
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.1), nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
outputs = []


def compute_loss(x, y):
    logits = model(x)
    return nn.functional.cross_entropy(logits, y)


def record_outputs(x):
    outputs.append(model(x))


for step in range(4):
    x, y = torch.randn(4, 8), torch.randint(0, 2, (4,))
    optimizer.zero_grad()
    loss = compute_loss(x, y)
    loss.backward()
    optimizer.step()
    outputs.clear()
    record_outputs(x)
    optimizer.zero_grad()
    nn.functional.cross_entropy(outputs[0], y).backward()
    optimizer.step()
