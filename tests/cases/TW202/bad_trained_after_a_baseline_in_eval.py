"""TW202: a baseline is measured in eval mode before training; the loop switches to `train()` and the final test runs
without switching back, so it tests with Dropout on."""
import torch
from torch import nn

torch.manual_seed(0)
x, y = torch.randn(40, 6), torch.randint(0, 3, (40,))
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.5), nn.Linear(16, 3))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

model.eval()
with torch.no_grad():
    print("baseline", nn.functional.cross_entropy(model(x[30:]), y[30:]).item())

for epoch in range(3):
    model.train()
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(x[:30]), y[:30])
    loss.backward()
    optimizer.step()

with torch.no_grad():
    output = model(x[30:])  # error: TW202
print("test accuracy", (output.argmax(1) == y[30:]).float().mean().item())
