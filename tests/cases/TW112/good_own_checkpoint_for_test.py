"""Correct: the script writes its checkpoint with the optimizer's state every epoch, and after the last epoch loads
the model back from it only to test it: nothing trains after the load, so no optimizer state is lost."""
import io

import torch
from torch import nn

torch.manual_seed(0)
x = torch.randn(32, 6)
y = (x[:, 0] > 0).long()
model = nn.Sequential(nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
store = io.BytesIO()
for epoch in range(3):
    for i in range(0, len(x), 8):
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x[i:i + 8]), y[i:i + 8]).backward()
        optimizer.step()
    store.seek(0)
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, store)

store.seek(0)
checkpoint = torch.load(store, weights_only=True)
model.load_state_dict(checkpoint["model"])
model.eval()
with torch.no_grad():
    print((model(x).argmax(1) == y).float().mean().item())
