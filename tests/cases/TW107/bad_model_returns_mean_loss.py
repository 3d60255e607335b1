"""TW107: the model's own forward returns a mean loss, the micro-batches each run backward and the optimizers step
once per batch: the update is len(inputs) // mbs times too large."""
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x, y):
        return nn.functional.cross_entropy(self.fc(x), y, reduction="mean")


torch.manual_seed(0)
model = Net()
optimizers = [torch.optim.Adam(model.fc.parameters(), lr=1e-3)]
batches = [(torch.randn(32, 8), torch.randint(0, 4, (32,))) for _ in range(3)]
mbs = 8
for inputs, targets in batches:
    for i in range(len(inputs) // mbs):
        model(inputs[i * mbs:(i + 1) * mbs], targets[i * mbs:(i + 1) * mbs]).backward()  # static: TW107
    for group in optimizers[0].param_groups:
        group["lr"] = 1e-3
    for opt in optimizers:
        opt.step()
    model.zero_grad(set_to_none=True)
