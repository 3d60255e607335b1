"""Two functions of one file each build their own `net`: one with BatchNorm, one a single Linear layer measured in
training mode by a closure. Mode matters only for the first; the second's `net` has no Dropout or BatchNorm."""
import torch
from torch import nn


def train_conv(x, y):
    net = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 2))
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    for step in range(3):
        net.train()
        optimizer.zero_grad()
        nn.functional.cross_entropy(net(x), y).backward()
        optimizer.step()
    net.eval()
    with torch.no_grad():
        return (net(x).argmax(1) == y).float().mean().item()


def train_linear(features, labels):
    net = nn.Sequential(nn.Linear(4, 1))
    loss = nn.MSELoss()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.05)

    @torch.no_grad()
    def eval_loss():
        return loss(net(features).view(-1), labels).item() / 2

    history = [eval_loss()]
    for step in range(3):
        optimizer.zero_grad()
        loss(net(features).view(-1), labels).backward()
        optimizer.step()
        history.append(eval_loss())
    return history


torch.manual_seed(0)
x = torch.randn(16, 4)
print(train_conv(x, torch.randint(0, 2, (16,))), train_linear(x, x.sum(1)))
