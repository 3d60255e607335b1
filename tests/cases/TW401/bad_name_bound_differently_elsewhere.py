"""TW401: a course's utilities: one function binds `data_iter` to a generator of shuffled batches, and the training
function binds its own `data_iter` to a DataLoader that does not shuffle: every epoch sees the same order."""
import random

import torch
from torch import nn


def batches(batch_size, features, labels):
    indices = list(range(len(features)))
    random.shuffle(indices)
    for i in range(0, len(indices), batch_size):
        j = torch.tensor(indices[i:i + batch_size])
        yield features[j], labels[j]


def linear_regression(features, labels, batch_size=10, num_epochs=3):
    w = torch.zeros(features.shape[-1], requires_grad=True)
    for _ in range(num_epochs):
        data_iter = batches(batch_size, features, labels)
        for X, y in data_iter:
            l = ((X @ w - y) ** 2).mean()
            l.backward()
            with torch.no_grad():
                w -= 0.05 * w.grad
                w.grad.zero_()
    return w


def train(features, labels, batch_size=10, num_epochs=3):
    net = nn.Linear(features.shape[-1], 1)
    loss = nn.MSELoss()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.05)
    data_iter = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(features, labels), batch_size)  # error: TW401
    for _ in range(num_epochs):
        for X, y in data_iter:
            l = loss(net(X).view(-1), y)
            optimizer.zero_grad()
            l.backward()
            optimizer.step()


if __name__ == "__main__":
    torch.manual_seed(0)
    features = torch.randn(100, 3)
    labels = features @ torch.tensor([1.0, -2.0, 0.5])
    linear_regression(features, labels)
    train(features, labels)
