"""A GradScaler built with enabled=False is a pass-through: clipping without unscale_ is right."""
import torch
from torch import nn

torch.manual_seed(0)
use_fp16 = False
X = torch.randn(32, 8)
y = torch.randint(0, 2, (32,))
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
scaler = torch.amp.GradScaler("cpu", enabled=False)

for epoch in range(2):
    perm = torch.randperm(len(X))
    for start in range(0, len(X), 8):
        idx = perm[start:start + 8]
        optimizer.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=use_fp16):
            loss = nn.functional.cross_entropy(model(X[idx]), y[idx])
        scaler.scale(loss).backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
    print(epoch, loss.item())
