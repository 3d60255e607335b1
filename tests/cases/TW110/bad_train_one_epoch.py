"""TW110: the epoch loop calls a train_one_epoch() helper; the sampler's epoch is never set."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def train_one_epoch(model, loader, optimizer, criterion):
    model.train()
    total = 0.0
    for step, (x, y) in enumerate(loader):  # error: TW110
        optimizer.zero_grad(set_to_none=True)
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total


def main(epochs=3, world_size=2, rank=1):
    torch.manual_seed(0)
    X = torch.randn(48, 6)
    Y = X.sum(1, keepdim=True)
    data = TensorDataset(X, Y)
    train_loader = DataLoader(data, batch_size=6, sampler=DistributedSampler(data, num_replicas=world_size, rank=rank, seed=3))
    model = nn.Sequential(nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        print(epoch, train_one_epoch(model, train_loader, optimizer, nn.MSELoss()))


if __name__ == "__main__":
    main()
