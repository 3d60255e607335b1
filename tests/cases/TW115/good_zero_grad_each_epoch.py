"""Correct: gradients are cleared at the start of every epoch, so the last epoch's leftover never reaches a step."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def train(model, loader, optimizer, epochs, accum_iter=4):
    for epoch in range(epochs):
        optimizer.zero_grad()
        for data_iter_step, (samples, targets) in enumerate(loader):
            loss = nn.functional.cross_entropy(model(samples), targets)
            (loss / accum_iter).backward()
            if (data_iter_step + 1) % accum_iter == 0:
                optimizer.step()
                optimizer.zero_grad()


if __name__ == "__main__":
    torch.manual_seed(0)
    net = nn.Linear(5, 3)
    data = DataLoader(TensorDataset(torch.randn(26, 5), torch.randint(0, 3, (26,))), batch_size=4, shuffle=True)
    train(net, data, torch.optim.SGD(net.parameters(), lr=0.1), epochs=2)
