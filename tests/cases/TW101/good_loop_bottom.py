"""zero_grad(set_to_none=True) at the bottom of the iteration, after the step."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
ds = TensorDataset(torch.randn(32, 8), torch.randint(0, 3, (32,)))
loader = DataLoader(ds, batch_size=8, shuffle=True, generator=torch.Generator().manual_seed(0))
model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 3))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.CrossEntropyLoss()

for epoch in range(3):
    for x, target in loader:
        loss = criterion(model(x), target)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    print(epoch, round(loss.item(), 4))
