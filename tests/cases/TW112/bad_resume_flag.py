"""TW112: `if resume:` reloads the weights; the cosine schedule and the AdamW moments start over."""
import io
import sys

import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(10, 3)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=40)
saved = io.BytesIO()
torch.save(model.state_dict(), saved)
saved.seek(0)

resume = "--fresh" not in sys.argv
if resume:
    weights = torch.load(saved, weights_only=True)
    model.load_state_dict(weights)  # static: TW112

for step in range(20):
    x = torch.randn(16, 10)
    y = torch.randint(0, 3, (16,))
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    scheduler.step()
