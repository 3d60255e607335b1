"""The trained model is switched to eval to checkpoint it mid-training, then back to train."""
import io

import torch
from torch import nn

torch.manual_seed(0)
transformer = nn.Sequential(nn.Linear(6, 12), nn.BatchNorm1d(12), nn.ReLU(), nn.Linear(12, 6))
optimizer = torch.optim.Adam(transformer.parameters(), lr=1e-3)
data = [torch.randn(8, 6) for _ in range(4)]

for epoch in range(2):
    transformer.train()
    for batch_id, i in enumerate(torch.randperm(len(data)).tolist()):
        x = data[i]
        optimizer.zero_grad()
        loss = (transformer(x) - x).pow(2).mean()
        loss.backward()
        optimizer.step()
        if (batch_id + 1) % 2 == 0:
            transformer.eval()
            torch.save(transformer.state_dict(), io.BytesIO())
            transformer.train()

transformer.eval()
torch.save(transformer.state_dict(), io.BytesIO())
