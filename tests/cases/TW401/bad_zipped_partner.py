"""TW401: two domains are zipped batch by batch; the first loader shuffles, its partner keeps a fixed order."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
source = TensorDataset(torch.randn(32, 4), torch.randint(0, 2, (32,)))
target = TensorDataset(torch.randn(32, 4), (torch.arange(32) >= 16).long())
loader_a = DataLoader(source, batch_size=8, shuffle=True)
loader_b = DataLoader(target, batch_size=8)  # error: TW401
model = nn.Linear(4, 2)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

for epoch in range(2):
    for i, ((xa, ya), (xb, yb)) in enumerate(zip(loader_a, loader_b)):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(xa), ya) + nn.functional.cross_entropy(model(xb), yb)
        loss.backward()
        optimizer.step()
