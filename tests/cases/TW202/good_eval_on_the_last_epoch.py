"""Validation every other epoch and on the last one: after the loop the model is always in eval mode, even though the
`if` skips `model.eval()` in some epochs (its test changes from one epoch to the next)."""
import torch
from torch import nn

EPOCHS = 5
torch.manual_seed(0)
x, y = torch.randn(40, 6), torch.randint(0, 3, (40,))
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.5), nn.Linear(16, 3))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

for epoch in range(EPOCHS):
    model.train()
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(x[:30]), y[:30])
    loss.backward()
    optimizer.step()
    if epoch % 2 == 0 or epoch == EPOCHS - 1:
        model.eval()
        with torch.no_grad():
            print(epoch, nn.functional.cross_entropy(model(x[30:]), y[30:]).item())

with torch.no_grad():
    output = model(x[30:])
print("test accuracy", (output.argmax(1) == y[30:]).float().mean().item())
