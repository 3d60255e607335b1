"""A GAN with two optimizers, each cleared before its own backward."""
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
        ones, zeros = torch.ones(len(real), 1), torch.zeros(len(real), 1)
        fake = G(torch.randn(len(real), 4))

        opt_d.zero_grad()
        d_loss = bce(D(real), ones) + bce(D(fake.detach()), zeros)
        d_loss.backward()
        opt_d.step()

        opt_g.zero_grad()
        g_loss = bce(D(fake), ones)
        g_loss.backward()
        opt_g.step()
    print(f"epoch {epoch} d {d_loss.item():.3f} g {g_loss.item():.3f}")
