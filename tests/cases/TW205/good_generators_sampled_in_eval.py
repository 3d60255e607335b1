"""Two generators share one optimizer; sampling switches both to eval, and training switches them back."""
import itertools

import torch
from torch import nn

torch.manual_seed(0)
G_AB = nn.Sequential(nn.Linear(6, 12), nn.BatchNorm1d(12), nn.ReLU(), nn.Linear(12, 6))
G_BA = nn.Sequential(nn.Linear(6, 12), nn.BatchNorm1d(12), nn.ReLU(), nn.Linear(12, 6))
optimizer_G = torch.optim.Adam(itertools.chain(G_AB.parameters(), G_BA.parameters()), lr=2e-4)
batches = [(torch.randn(8, 6), torch.randn(8, 6)) for _ in range(4)]


def sample_images():
    G_AB.eval()
    G_BA.eval()
    with torch.no_grad():
        fake_B, fake_A = G_AB(batches[0][0]), G_BA(batches[0][1])
    return fake_A.mean().item() + fake_B.mean().item()


for epoch in range(2):
    for i, (real_A, real_B) in enumerate(batches):
        G_AB.train()
        G_BA.train()
        optimizer_G.zero_grad()
        loss = (G_BA(G_AB(real_A)) - real_A).abs().mean() + (G_AB(G_BA(real_B)) - real_B).abs().mean()
        loss.backward()
        optimizer_G.step()
        if i % 2 == 0:
            print(sample_images())
