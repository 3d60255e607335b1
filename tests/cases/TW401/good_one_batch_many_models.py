"""Correct: each shuffled batch trains several models in turn (an optimizer comparison)."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
x = torch.linspace(-1, 1, 64).unsqueeze(1)
y = x.pow(2) + 0.1 * torch.randn(x.size())
loader = DataLoader(TensorDataset(x, y), batch_size=16, shuffle=True, num_workers=0)
nets = [nn.Sequential(nn.Linear(1, 10), nn.ReLU(), nn.Linear(10, 1)) for _ in range(2)]
optimizers = [torch.optim.SGD(nets[0].parameters(), lr=0.01), torch.optim.Adam(nets[1].parameters(), lr=0.01)]

for epoch in range(3):
    for step, (b_x, b_y) in enumerate(loader):
        for net, opt in zip(nets, optimizers):
            loss = nn.functional.mse_loss(net(b_x), b_y)
            opt.zero_grad()
            loss.backward()
            opt.step()
