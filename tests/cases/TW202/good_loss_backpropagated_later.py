"""Per-chunk losses kept (not read as numbers) and backpropagated together after the loop: training, not validation."""
import torch
from torch import nn

torch.manual_seed(0)
chunks = [(torch.randn(4, 6), torch.randint(0, 2, (4,))) for _ in range(3)]
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for epoch in range(3):
    model.train()
    losses = []
    for x, y in chunks:
        out = model(x)
        losses.append(nn.functional.cross_entropy(out, y))
    optimizer.zero_grad()
    torch.stack(losses).mean().backward()
    optimizer.step()
    print(epoch, float(sum(l.item() for l in losses)))
