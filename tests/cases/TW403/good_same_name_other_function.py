"""Two helpers both call their model `net`: one moves it to the device, the other runs on the CPU."""
import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def train_cpu(net, batches):
    optimizer = torch.optim.SGD(net.parameters(), lr=0.05)
    for epoch in range(2):
        for X, y in batches:
            loss = nn.functional.cross_entropy(net(X), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


def train_gpu(net, batches):
    net = net.to(device)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.05)
    for epoch in range(2):
        for X, y in batches:
            X, y = X.to(device), y.to(device)
            loss = nn.functional.cross_entropy(net(X), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


torch.manual_seed(0)
data = [(torch.randn(4, 6), torch.randint(0, 2, (4,))) for _ in range(3)]
loader = torch.utils.data.DataLoader(data, batch_size=None, shuffle=True)
train_cpu(nn.Linear(6, 2), loader)
train_gpu(nn.Linear(6, 2), loader)
