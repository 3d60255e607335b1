# case: static-only
"""One forward under no_grad before the optimizer exists, to initialise lazy modules: not validation.

Static only: at run time a no_grad forward at step 0 looks like a validation pass at step 0 (the watcher
cannot see that its output is unused), so the runtime checker reports it; the static checker sees it is
no loop and no step has happened yet."""
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.LazyLinear(16), nn.Dropout(0.2), nn.ReLU(), nn.Linear(16, 3))
x, y = torch.randn(8, 6), torch.randint(0, 3, (8,))
with torch.no_grad():  # initialise the lazy layer's shapes
    model(x)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(3):
    model.train()
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
