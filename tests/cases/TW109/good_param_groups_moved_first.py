"""Correct: the model is moved and cast first, then Adagrad is built over its backbone and head as two parameter
groups: its state is made for the parameters that train."""
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(8, 8)
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        return self.head(torch.relu(self.backbone(x)))


torch.manual_seed(0)
device = torch.device("cpu")
model = Net().double().to(device)
groups = [{"params": model.backbone.parameters(), "lr": 0.01}, {"params": model.head.parameters()}]
optimizer = torch.optim.Adagrad(groups, lr=0.1)
batches = [(torch.randn(4, 8, dtype=torch.double), torch.randint(0, 2, (4,))) for _ in range(3)]
for epoch in range(2):
    for x, y in batches:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
