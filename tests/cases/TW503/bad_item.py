# case: static-only
"""TW503: loss.item() on every step of a GPU loop: the host waits for the device each time."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
device = "cuda"
ds = TensorDataset(torch.randn(256, 32), torch.randint(0, 4, (256,)))
loader = DataLoader(ds, batch_size=32, shuffle=True, pin_memory=True)
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4)).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

for epoch in range(2):
    running = 0.0
    for x, y in loader:
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        optimizer.zero_grad(set_to_none=True)
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        running += loss.item() * x.size(0)  # error: TW503
    print(epoch, running / len(ds))
