"""An accuracy helper for both kinds of model: an `nn.Module` (moved to the device, its batch moved too) and, in the
`else` of `isinstance(net, nn.Module)`, a hand-written function that never left the CPU."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def evaluate_accuracy(data_iter, net, device=torch.device("cpu")):
    acc_sum, n = 0.0, 0
    with torch.no_grad():
        for X, y in data_iter:
            if isinstance(net, nn.Module):
                net.eval()
                acc_sum += (net(X.to(device)).argmax(dim=1) == y.to(device)).float().sum().item()
                net.train()
            else:
                acc_sum += (net(X).argmax(dim=1) == y).float().sum().item()
            n += y.shape[0]
    return acc_sum / n


def train(net, loader, device):
    net = net.to(device)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    for epoch in range(2):
        for X, y in loader:
            X, y = X.to(device), y.to(device)
            optimizer.zero_grad()
            nn.functional.cross_entropy(net(X), y).backward()
            optimizer.step()
        print(epoch, evaluate_accuracy(loader, net, device))


torch.manual_seed(0)
loader = DataLoader(TensorDataset(torch.randn(16, 4), torch.randint(0, 2, (16,))), batch_size=4, shuffle=True)
train(nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.1), nn.Linear(8, 2)), loader, torch.device("cpu"))
W = torch.randn(4, 2)
print(evaluate_accuracy(loader, lambda X: X @ W))
