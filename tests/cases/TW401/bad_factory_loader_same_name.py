"""TW401: PyTorch-YOLOv3's layout: a local factory builds `dataloader` and returns it, and the training function binds
its own `dataloader` to the factory's result: the loader it iterates does not shuffle."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def create_data_loader(features, labels, batch_size):
    dataloader = DataLoader(TensorDataset(features, labels), batch_size=batch_size, num_workers=0)  # error: TW401
    return dataloader


def run(epochs=3):
    torch.manual_seed(0)
    features, labels = torch.randn(64, 4), torch.randint(0, 2, (64,))
    dataloader = create_data_loader(features, labels, 8)
    model = nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        for batch_i, (x, y) in enumerate(dataloader):
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()


if __name__ == "__main__":
    run()
