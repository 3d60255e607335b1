"""TW301: the discriminator's layers are collected in a list whose last entry is nn.Sigmoid, then unpacked into
nn.Sequential; the loss is BCEWithLogitsLoss."""
import torch
from torch import nn


class Discriminator(nn.Module):
    def __init__(self, width):
        super().__init__()
        layers = [nn.Linear(width, 16), nn.LeakyReLU(0.2)]
        layers += [nn.Linear(16, 1)]
        layers.append(nn.Sigmoid())
        self.model = nn.Sequential(*layers)

    def forward(self, img):
        validity = self.model(img)
        return validity


torch.manual_seed(0)
discriminator = Discriminator(12)
criterion = nn.BCEWithLogitsLoss()
optimizer = torch.optim.Adam(discriminator.parameters(), lr=2e-4)
for step in range(4):
    optimizer.zero_grad()
    loss = criterion(discriminator(torch.randn(8, 12)), torch.ones(8, 1))  # error: TW301
    loss.backward()
    optimizer.step()
print(loss.item())
