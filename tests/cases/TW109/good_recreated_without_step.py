"""A checkpoint test: the model is re-created after the optimizer, only to load state into; nothing steps after."""
import io

import torch

torch.manual_seed(0)
model = torch.nn.Linear(2, 2)
optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
optimizer.zero_grad()
model(torch.randn(3, 2)).sum().backward()
optimizer.step()
buffer = io.BytesIO()
torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, buffer)

model = torch.nn.Linear(2, 2)
buffer.seek(0)
state = torch.load(buffer, weights_only=True)
model.load_state_dict(state["model"])
assert model.weight.shape == (2, 2)
