"""DataParallel scatters the CPU batch to its GPUs itself; the targets are moved for the loss."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
net = net.to(device)
if device == "cuda":
    net = nn.DataParallel(net)
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss()
loader = DataLoader(TensorDataset(torch.randn(32, 8), torch.randint(0, 2, (32,))), batch_size=8, shuffle=True)
for epoch in range(2):
    for inputs, targets in loader:
        targets = targets.to(device)
        optimizer.zero_grad()
        loss = criterion(net(inputs), targets)
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
