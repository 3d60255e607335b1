"""Correct: the network frozen, then handed to a helper that hands it on to another that replaces its head with a
new trainable layer; the optimizer over the whole network then holds trainable parameters."""
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
        self.head = nn.Linear(16, 10)

    def forward(self, x):
        return self.head(self.features(x))


def replace_head(net, classes):
    net.head = nn.Linear(net.head.in_features, classes)


def adapt(net, classes):
    replace_head(net, classes)
    return net


torch.manual_seed(0)
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model.requires_grad_(False)
adapt(model, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
inputs, labels = torch.randn(32, 8), torch.randint(0, 3, (32,))
for epoch in range(3):
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(inputs), labels).backward()
    optimizer.step()
