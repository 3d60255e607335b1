"""TW306: a test loader built by a helper with drop_last=True and read by an evaluate() function under no_grad."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def make_loader(dataset, batch_size, train):
    return DataLoader(dataset, batch_size=batch_size, shuffle=train, drop_last=True)  # error: TW306


@torch.no_grad()
def evaluate(model, loader):
    losses = []
    for inputs, targets in loader:
        losses.append(nn.functional.mse_loss(model(inputs), targets, reduction="sum").item())
    return sum(losses)


def main():
    torch.manual_seed(0)
    model = nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    train_data = TensorDataset(torch.randn(64, 4), torch.randn(64, 1))
    for epoch in range(2):
        for inputs, targets in DataLoader(train_data, batch_size=16, shuffle=True):
            optimizer.zero_grad()
            nn.functional.mse_loss(model(inputs), targets).backward()
            optimizer.step()
    test_loader = make_loader(TensorDataset(torch.randn(37, 4), torch.randn(37, 1)), 8, train=False)
    print("test loss", evaluate(model, test_loader) / 37)


if __name__ == "__main__":
    main()
