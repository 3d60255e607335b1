"""Correct: a training checkpoint (model and epoch) starts a fine-tuning on a new task: the head is new (5 classes
instead of 2), so a fresh AdamW and a fresh cosine schedule are the intent, not a lost resume."""
import io

import torch
from torch import nn


def classifier(classes):
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, classes))


torch.manual_seed(0)
store = io.BytesIO()
torch.save({"model": classifier(2).state_dict(), "epoch": 30}, store)
store.seek(0)
saved = torch.load(store, weights_only=True)["model"]
model = classifier(5)
model.load_state_dict({k: v for k, v in saved.items() if not k.startswith("2.")}, strict=False)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=3)
for epoch in range(3):
    for _ in range(2):
        x, y = torch.randn(16, 8), torch.randint(0, 5, (16,))
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    scheduler.step()
