"""The whole (small) dataset is put on the device once (by hand, by its class, by a factory): the batches the
DataLoader hands out are already there."""
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, TensorDataset

torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class OnDevice(Dataset):
    def __init__(self, n):
        self.x = torch.randn(n, 8).to(device)
        self.y = torch.randint(0, 2, (n,)).to(device)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


def make_dataset(n):
    return TensorDataset(torch.randn(n, 8, device=device), torch.randint(0, 2, (n,), device=device))


X, Y = torch.randn(32, 8).to(device), torch.randint(0, 2, (32,)).to(device)
tensor_loader = DataLoader(TensorDataset(X, Y), batch_size=8, shuffle=True)
class_loader = DataLoader(OnDevice(32), batch_size=8, shuffle=True)
factory_loader = DataLoader(make_dataset(32), batch_size=8, shuffle=True)
model = nn.Linear(8, 2).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in tensor_loader:
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
for x, y in class_loader:
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
for x, y in factory_loader:
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
print(loss.item())
