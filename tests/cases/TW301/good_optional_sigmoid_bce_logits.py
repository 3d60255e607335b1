"""A forward that applies sigmoid only when asked (`if self.probabilities:`), built without it: logits reach
BCEWithLogitsLoss, so nothing is reported."""
import torch
from torch import nn


class Discriminator(nn.Module):
    def __init__(self, probabilities=False):
        super().__init__()
        self.probabilities = probabilities
        self.main = nn.Sequential(nn.Linear(6, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))

    def forward(self, x):
        out = self.main(x)
        if self.probabilities:
            out = torch.sigmoid(out)
        return out.squeeze(1)


torch.manual_seed(0)
netD = Discriminator()
criterion = nn.BCEWithLogitsLoss()
optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4)
real = torch.randn(32, 6)
for epoch in range(2):
    for i in range(0, 32, 8):
        netD.zero_grad()
        errD = criterion(netD(real[i:i + 8]), torch.ones(8))
        errD.backward()
        optimizerD.step()
    print(epoch, errD.item())
