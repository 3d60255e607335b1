"""Multi-crop training: the model (from a factory) moves the crops to the device inside its own forward."""
import torch
from torch import nn


class MultiCropNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(6, 4)

    def forward(self, crops):
        device = self.body.weight.device
        return self.body(torch.cat([c.to(device, non_blocking=True) for c in crops]))


MODELS = {"multicrop": MultiCropNet}
torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = MODELS["multicrop"]()
model = model.to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
loader = torch.utils.data.DataLoader([[torch.randn(6), torch.randn(6)] for _ in range(8)], batch_size=4, shuffle=True)
for epoch in range(2):
    for inputs in loader:
        out = model(inputs)
        loss = out.pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
