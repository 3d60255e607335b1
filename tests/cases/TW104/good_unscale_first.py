"""unscale_, then clip, then scaler.step."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
ds = TensorDataset(torch.randn(40, 8), torch.randint(0, 2, (40,)))
loader = DataLoader(ds, batch_size=10, shuffle=True, generator=torch.Generator().manual_seed(0))
model = nn.Sequential(nn.Linear(8, 32), nn.GELU(), nn.Linear(32, 2))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler("cpu")

for epoch in range(2):
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
    print(epoch, loss.item())
