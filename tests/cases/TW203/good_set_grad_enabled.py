"""One loop for both phases: torch.set_grad_enabled(phase == "train")."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
g = torch.Generator().manual_seed(0)
X, Y = torch.randn(48, 8), torch.randint(0, 2, (48,))
loaders = {
    "train": DataLoader(TensorDataset(X[:32], Y[:32]), batch_size=8, shuffle=True, generator=g),
    "val": DataLoader(TensorDataset(X[32:], Y[32:]), batch_size=8),
}
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Dropout(0.5), nn.Linear(32, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

for epoch in range(3):
    model.train()
    for x, y in loaders["train"]:
        optimizer.zero_grad()
        with torch.set_grad_enabled(True):
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
    model.eval()
    correct = 0
    with torch.set_grad_enabled(False):
        for x, y in loaders["val"]:
            correct += (model(x).argmax(1) == y).sum().item()
    print(epoch, loss.item(), correct / len(loaders["val"].dataset))
