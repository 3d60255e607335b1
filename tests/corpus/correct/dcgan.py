"""A DCGAN-style training loop on 2-D points: two networks, two optimizers, the classic
discriminator-then-generator update with label tensors and a Sigmoid + BCELoss discriminator."""
import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset

nz, batch_size, num_epochs = 4, 16, 3
real_label, fake_label = 1.0, 0.0


def weights_init(m):
    if isinstance(m, nn.Linear):
        nn.init.normal_(m.weight, 0.0, 0.02)
        nn.init.zeros_(m.bias)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(nz, 32), nn.BatchNorm1d(32), nn.ReLU(True), nn.Linear(32, 2))

    def forward(self, z):
        return self.main(z)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(2, 32), nn.LeakyReLU(0.2, inplace=True), nn.Linear(32, 1), nn.Sigmoid())

    def forward(self, x):
        return self.main(x).view(-1)


torch.manual_seed(999)
ring = torch.randn(64, 2)
ring = 2.0 * ring / ring.norm(dim=1, keepdim=True)
dataloader = DataLoader(TensorDataset(ring), batch_size=batch_size, shuffle=True,
                        generator=torch.Generator().manual_seed(999))

netG, netD = Generator(), Discriminator()
netG.apply(weights_init)
netD.apply(weights_init)
criterion = nn.BCELoss()
fixed_noise = torch.randn(8, nz)
optimizerD = optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
optimizerG = optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))

G_losses, D_losses = [], []
for epoch in range(num_epochs):
    for i, (real,) in enumerate(dataloader):
        b_size = real.size(0)
        # (1) update D: maximize log(D(x)) + log(1 - D(G(z)))
        netD.zero_grad()
        label = torch.full((b_size,), real_label)
        errD_real = criterion(netD(real), label)
        errD_real.backward()
        fake = netG(torch.randn(b_size, nz))
        label.fill_(fake_label)
        errD_fake = criterion(netD(fake.detach()), label)
        errD_fake.backward()
        optimizerD.step()
        # (2) update G: maximize log(D(G(z)))
        netG.zero_grad()
        label.fill_(real_label)
        errG = criterion(netD(fake), label)
        errG.backward()
        optimizerG.step()
        G_losses.append(errG.item())
        D_losses.append((errD_real + errD_fake).item())
    netG.eval()
    with torch.no_grad():
        samples = netG(fixed_noise)
    netG.train()
    print(f"[{epoch}/{num_epochs}] Loss_D {D_losses[-1]:.4f} Loss_G {G_losses[-1]:.4f} "
          f"mean radius {samples.norm(dim=1).mean().item():.3f}")
