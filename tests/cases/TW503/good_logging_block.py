# case: static-only
"""The host sync happens only inside the `if step % log_every == 0` logging block."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
device = "cuda"
ds = TensorDataset(torch.randn(256, 32), torch.randint(0, 4, (256,)))
loader = DataLoader(ds, batch_size=32, shuffle=True, pin_memory=True)
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4)).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
log_every = 4

for epoch in range(2):
    for step, (x, y) in enumerate(loader):
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        optimizer.zero_grad(set_to_none=True)
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        if step % log_every == 0:
            print(epoch, step, loss.item())
