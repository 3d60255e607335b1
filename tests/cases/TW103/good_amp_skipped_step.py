"""fp16 AMP: unscale, clip, scaler.step. The first steps overflow (a huge
initial scale) and GradScaler skips them: the clip still belongs to its own
iteration."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
data = TensorDataset(torch.randn(64, 8), torch.randint(0, 2, (64,)))
loader = DataLoader(data, batch_size=8, shuffle=True, generator=torch.Generator().manual_seed(0))
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
scaler = torch.amp.GradScaler("cpu", init_scale=2.0**24)
skipped = 0

for epoch in range(2):
    for x, y in loader:
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.float16):
            loss = nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        before = scaler.get_scale()
        scaler.step(optimizer)
        scaler.update()
        skipped += scaler.get_scale() < before
print("skipped steps:", skipped)
assert skipped >= 1
