"""TW101: mixed precision loop with a GradScaler and no zero_grad."""
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
    for step, (x, y) in enumerate(loader):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()  # error: TW101
        scaler.step(optimizer)
        scaler.update()
    print(epoch, loss.item())
