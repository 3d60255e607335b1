# case: static-only
"""TW603: the whole model frozen right after its optimizer is built (a backbone freeze that names the model), then
trained, saved with `torch.save` and scored by an evaluation helper that hands it on to another: none of those
adds a parameter or unfreezes one, so the optimizer holds only frozen parameters and the run trains nothing
(here backward() even raises: no tensor of the loss requires grad)."""
import torch
from torch import nn


def predictions(net, inputs):
    net.eval()
    with torch.no_grad():
        return net(inputs).argmax(1)


def accuracy(net, inputs, labels):
    return (predictions(net, inputs) == labels).float().mean().item()


model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
model.requires_grad_(False)  # error: TW603
inputs, labels = torch.randn(32, 8), torch.randint(0, 3, (32,))
for epoch in range(3):
    model.train()
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(inputs), labels).backward()
    optimizer.step()
    print(epoch, accuracy(model, inputs, labels))
    torch.save(model, "model.pt")
