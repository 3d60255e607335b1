"""The DataLoader's keyword arguments, spread from a dict, carry a collate_fn that moves the batch."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.dataloader import default_collate

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def to_device(samples):
    return [t.to(device) for t in default_collate(samples)]


def train(model, train_loader, optimizer):
    model.train()
    for data, target in train_loader:
        optimizer.zero_grad()
        loss = F.nll_loss(model(data), target)
        loss.backward()
        optimizer.step()
    return loss.item()


def main():
    torch.manual_seed(0)
    kwargs = {"batch_size": 8, "collate_fn": to_device}
    train_loader = DataLoader(TensorDataset(torch.randn(32, 6), torch.randint(0, 3, (32,))), shuffle=True, **kwargs)
    model = nn.Sequential(nn.Linear(6, 3), nn.LogSoftmax(dim=1)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(2):
        print(epoch, train(model, train_loader, optimizer))


if __name__ == "__main__":
    main()
