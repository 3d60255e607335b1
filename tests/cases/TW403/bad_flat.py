"""TW403: the model goes to `device`, the batch does not (crashes on a GPU machine)."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
ds = TensorDataset(torch.randn(32, 8), torch.randint(0, 2, (32,)))
loader = DataLoader(ds, batch_size=8, shuffle=True, generator=torch.Generator().manual_seed(0))
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

for epoch in range(2):
    for x, y in loader:
        optimizer.zero_grad()
        out = model(x)  # static: TW403
        loss = nn.functional.cross_entropy(out, y.to(device))
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
