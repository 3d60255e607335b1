"""Evaluation: the forward runs under no_grad; its loss is read and appended outside the block (no graph)."""
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
train = [(torch.randn(8, 6), torch.randint(0, 3, (8,))) for _ in range(4)]
val = [(torch.randn(8, 6), torch.randint(0, 3, (8,))) for _ in range(2)]

for epoch in range(2):
    model.train()
    for i in torch.randperm(len(train)).tolist():
        x, y = train[i]
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    model.eval()
    losses = []
    for x, y in val:
        with torch.no_grad():
            outputs = model(x)
        loss = nn.functional.cross_entropy(outputs, y)
        losses.append(loss)
    print(epoch, torch.stack(losses).mean().item())
