"""Correct: the discriminator trains on every k-th batch only (a GAN schedule): its zero_grad, forward,
backward and step all sit under the same `i % k` test, so no micro-batch is left over at an epoch's end."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
discriminator = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
optimizer = torch.optim.Adam(discriminator.parameters(), lr=1e-3)
loader = DataLoader(TensorDataset(torch.randn(30, 8)), batch_size=4, shuffle=True)
d_every = 3

for epoch in range(2):
    for i, (real,) in enumerate(loader):
        if i % d_every == 0:
            optimizer.zero_grad()
            score = discriminator(real)
            loss = nn.functional.binary_cross_entropy_with_logits(score, torch.ones_like(score))
            loss.backward()
            optimizer.step()
