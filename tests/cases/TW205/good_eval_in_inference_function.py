"""Training and inference live in different functions that both call their variable `model`."""
import torch
from torch import nn


def train(model, data, epochs=2):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for epoch in range(epochs):
        model.train()
        for i in torch.randperm(len(data)).tolist():
            x, y = data[i]
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()


def translate(model, x):
    model.eval()
    with torch.no_grad():
        return model(x).argmax(-1)


torch.manual_seed(0)
net = nn.Sequential(nn.Linear(6, 12), nn.Dropout(0.1), nn.Linear(12, 3))
data = [(torch.randn(8, 6), torch.randint(0, 3, (8,))) for _ in range(4)]
train(net, data)
print(translate(net, torch.randn(2, 6)))
