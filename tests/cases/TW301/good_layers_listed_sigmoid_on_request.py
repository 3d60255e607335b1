"""The layers list ends in nn.Sigmoid only when asked; this discriminator is built without it and trained with
BCEWithLogitsLoss, which is correct. (Which layer comes last depends on the branch: not known.)"""
import torch
from torch import nn


class Discriminator(nn.Module):
    def __init__(self, width, probabilities=False):
        super().__init__()
        layers = [nn.Linear(width, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1)]
        if probabilities:
            layers.append(nn.Sigmoid())
        self.model = nn.Sequential(*layers)

    def forward(self, img):
        return self.model(img)


torch.manual_seed(0)
discriminator = Discriminator(12)
criterion = nn.BCEWithLogitsLoss()
optimizer = torch.optim.Adam(discriminator.parameters(), lr=2e-4)
for step in range(4):
    optimizer.zero_grad()
    loss = criterion(discriminator(torch.randn(8, 12)), torch.ones(8, 1))
    loss.backward()
    optimizer.step()
print(loss.item())
