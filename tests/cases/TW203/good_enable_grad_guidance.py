"""Classifier guidance: gradients with respect to the input, inside enable_grad, on purpose."""
import torch
from torch import nn

torch.manual_seed(0)
classifier = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))
optimizer = torch.optim.Adam(classifier.parameters(), lr=1e-3)
data = [(torch.randn(8, 6), torch.randint(0, 3, (8,))) for _ in range(3)]


def guidance(x, y, scale=1.0):
    with torch.enable_grad():
        x_in = x.detach().requires_grad_(True)
        log_probs = torch.log_softmax(classifier(x_in), dim=-1)
        selected = log_probs[range(len(y)), y]
        return torch.autograd.grad(selected.sum(), x_in)[0] * scale


for epoch in range(2):
    for x, y in data:
        optimizer.zero_grad()
        nn.functional.cross_entropy(classifier(x), y).backward()
        optimizer.step()
    with torch.no_grad():
        for x, y in data:
            print(guidance(x, y).norm().item())
