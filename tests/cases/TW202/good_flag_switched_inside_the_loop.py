"""The flag that guards `model.eval()` is switched on inside the loop before its last epoch: the last epoch always
validates in eval mode, so the test after the loop does too."""
import torch
from torch import nn

EPOCHS = 4
validate = False
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
    if epoch == EPOCHS - 1:
        validate = True
    if validate:
        model.eval()
        with torch.no_grad():
            print(epoch, nn.functional.cross_entropy(model(x[30:]), y[30:]).item())

with torch.no_grad():
    output = model(x[30:])
print("test accuracy", (output.argmax(1) == y[30:]).float().mean().item())
