"""TW108: the model's output is detached and made to require grad again (through a helper, or by assignment): the
loss has a leaf to backpropagate to, but no gradient reaches the model."""
import torch
from torch import nn


def fresh_copy(tensor):
    return tensor.detach().clone().requires_grad_(True)


torch.manual_seed(0)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(3)]
for x, y in data:
    optimizer.zero_grad()
    pred = fresh_copy(model(x))
    loss = nn.functional.mse_loss(pred, y)
    loss.backward()  # error: TW108
    optimizer.step()
for x, y in data:
    optimizer.zero_grad()
    pred = model(x).detach()
    pred.requires_grad = True
    loss = nn.functional.mse_loss(pred, y)
    loss.backward()  # error: TW108
    optimizer.step()
