"""TW101: the optimizer comes from a factory method of the model, and the only other thing done with it is the
learning-rate decay through its `param_groups` (only an optimizer has those and a `step()`); the batch loop never
clears the gradients."""
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 2)

    def forward(self, x):
        return self.fc(x)

    def get_optimizer(self, lr):
        return torch.optim.Adam(self.parameters(), lr=lr)


torch.manual_seed(0)
model = Net()
lr = 0.01
optimizer = model.get_optimizer(lr)
batches = [(torch.randn(4, 8), torch.randint(0, 2, (4,))) for _ in range(3)]
for epoch in range(3):
    for x, y in batches:
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()  # error: TW101
        optimizer.step()
    lr = lr * 0.5
    for group in optimizer.param_groups:
        group["lr"] = lr
