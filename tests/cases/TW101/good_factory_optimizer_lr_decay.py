"""Correct: the optimizer comes from a factory method of the model, its learning rate decays through its
`param_groups`, and the batch loop clears the gradients before each backward."""
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
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    lr = lr * 0.5
    for group in optimizer.param_groups:
        group["lr"] = lr
