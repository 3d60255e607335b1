"""TW102: the generator's gradients are wiped before its step."""
import torch
from torch import nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
D = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=2e-4)
opt_d = torch.optim.Adam(D.parameters(), lr=2e-4)
bce = nn.BCEWithLogitsLoss()
real_data = torch.randn(48, 2) + 1.0

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

        g_loss = bce(D(fake), ones)
        g_loss.backward()
        opt_g.zero_grad()  # error: TW102
        opt_g.step()
    print(epoch, d_loss.item(), g_loss.item())
