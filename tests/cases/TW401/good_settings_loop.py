"""A test harness: one training pass per combination of settings, each with its own fresh loader."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def one_pass(momentum, nesterov):
    torch.manual_seed(0)
    loader = DataLoader(TensorDataset(torch.randn(32, 6), torch.randn(32, 1)), batch_size=8)
    model = nn.Linear(6, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=momentum, nesterov=nesterov)
    for x, y in loader:
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    return model.weight.sum().item()


for momentum in [0.9, 0.5]:
    for nesterov in [True, False]:
        print(momentum, nesterov, one_pass(momentum, nesterov))
