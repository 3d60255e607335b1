"""TW101: a GAN whose discriminator is cleared each step but the generator never is."""
import torch
from torch import nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
D = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))
opt_d = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
bce = nn.BCEWithLogitsLoss()
real_data = torch.randn(48, 2) * 0.5 + 2.0

for epoch in range(2):
    perm = torch.randperm(len(real_data))
    for i in range(0, len(real_data), 16):
        real = real_data[perm[i:i + 16]]
        z = torch.randn(len(real), 4)
        fake = G(z)

        opt_d.zero_grad()
        d_loss = bce(D(real), torch.ones(len(real), 1)) + bce(D(fake.detach()), torch.zeros(len(real), 1))
        d_loss.backward()
        opt_d.step()

        g_loss = bce(D(fake), torch.ones(len(real), 1))
        g_loss.backward()  # error: TW101
        opt_g.step()
    print(f"epoch {epoch} d {d_loss.item():.3f} g {g_loss.item():.3f}")
