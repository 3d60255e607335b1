"""Correct: a checkpoint loaded for inference only; nothing trains after the load."""
import io

import torch
from torch import nn

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
buffer = io.BytesIO()
torch.save({"model": model.state_dict(), "epoch": 9}, buffer)
buffer.seek(0)
ckpt = torch.load(buffer, weights_only=True)
model.load_state_dict(ckpt["model"])
print("loaded epoch", ckpt["epoch"])
model.eval()
with torch.no_grad():
    print(model(torch.randn(3, 4)).argmax(1))
