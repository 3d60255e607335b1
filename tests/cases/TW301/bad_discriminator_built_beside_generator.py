"""TW301: a GAN whose generator and discriminator are built on one line; the discriminator ends in nn.Sigmoid and
is trained with BCEWithLogitsLoss."""
import torch
from torch import nn


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(12, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1), nn.Sigmoid())

    def forward(self, img):
        return self.model(img.view(img.size(0), -1))


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 12), nn.Tanh())

    def forward(self, z):
        return self.net(z)


torch.manual_seed(0)
D, G = Discriminator(), Generator()
adversarial_loss = nn.BCEWithLogitsLoss()
opt_d = torch.optim.Adam(D.parameters(), lr=2e-4)
for step in range(4):
    real, z = torch.randn(8, 12), torch.randn(8, 4)
    opt_d.zero_grad()
    d_loss = adversarial_loss(D(real), torch.ones(8, 1))  # error: TW301
    d_loss = d_loss + adversarial_loss(D(G(z).detach()), torch.zeros(8, 1))  # error: TW301
    d_loss.backward()
    opt_d.step()
print(d_loss.item())
