"""Softmax only for the reported confidence; the loss gets the raw logits."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
ds = TensorDataset(torch.randn(32, 8), torch.randint(0, 3, (32,)))
loader = DataLoader(ds, batch_size=8, shuffle=True, generator=torch.Generator().manual_seed(0))
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for epoch in range(3):
    confidence = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        logits = model(x)
        loss = criterion(logits, y)
        loss.backward()
        optimizer.step()
        probs = torch.softmax(logits.detach(), dim=1)
        confidence += probs.max(dim=1).values.sum().item()
    print(epoch, loss.item(), confidence / len(ds))
