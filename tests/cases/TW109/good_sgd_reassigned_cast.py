"""SGD built, then `model = model.double().to(device)`: the cast keeps the Parameter objects (fact 1) and SGD
has no state made at construction, so the optimizer still trains the model."""
import torch
from torch import nn

torch.manual_seed(0)
device = torch.device("cpu")
X = torch.randn(32, 8, dtype=torch.float64)
y = torch.randint(0, 2, (32,))
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
model = model.double().to(device)

for epoch in range(2):
    perm = torch.randperm(len(X))
    for start in range(0, len(X), 8):
        idx = perm[start:start + 8]
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(X[idx]), y[idx])
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
