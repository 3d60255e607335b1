"""TW403: main() moves the model and calls train(); train() moves the inputs but not the targets."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def train(model, device, train_loader, optimizer):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)  # static: TW403
        loss.backward()
        optimizer.step()
    return loss.item()


def main():
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    kwargs = {"batch_size": 8}
    if device.type == "cuda":
        kwargs.update({"num_workers": 1, "pin_memory": True})
    data = TensorDataset(torch.randn(32, 6), torch.randint(0, 3, (32,)))
    train_loader = DataLoader(data, shuffle=True, **kwargs)
    model = nn.Sequential(nn.Linear(6, 3), nn.LogSoftmax(dim=1)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(2):
        print(epoch, train(model, device, train_loader, optimizer))


if __name__ == "__main__":
    main()
