# case: static-only
"""TW603: the model frozen right after its optimizer is built, trained, then handed to an explainer library once the
training is over: nothing the code does after the training can make that training train anything."""
import torch
from torch import nn
from torch_geometric.explain import Explainer, GNNExplainer

model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
model.requires_grad_(False)  # error: TW603
x, y = torch.randn(32, 8), torch.randint(0, 3, (32,))
for _ in range(200):
    model.train()
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()

explainer = Explainer(model=model, algorithm=GNNExplainer(epochs=200), explanation_type="model")
print(explainer)
