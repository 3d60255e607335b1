"""TW303: NLLLoss on raw logits: it just negates the picked logit, which is unbounded below."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
ds = TensorDataset(torch.randn(32, 8), torch.randint(0, 3, (32,)))
loader = DataLoader(ds, batch_size=8, shuffle=True, generator=torch.Generator().manual_seed(0))
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
criterion = nn.NLLLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

for epoch in range(3):
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)  # error: TW303
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
