"""TW301: a DCGAN-style discriminator whose nn.Sequential ends in nn.Sigmoid, trained with BCEWithLogitsLoss."""
import torch
from torch import nn


class Discriminator(nn.Module):
    def __init__(self, ngpu):
        super().__init__()
        self.ngpu = ngpu
        self.main = nn.Sequential(nn.Linear(6, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1), nn.Sigmoid())

    def forward(self, input):
        if input.is_cuda and self.ngpu > 1:
            output = nn.parallel.data_parallel(self.main, input, range(self.ngpu))
        else:
            output = self.main(input)
        return output.view(-1, 1).squeeze(1)


torch.manual_seed(0)
netD = Discriminator(1)
criterion = nn.BCEWithLogitsLoss()
optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4)
real = torch.randn(32, 6)
for epoch in range(2):
    for i in range(0, 32, 8):
        netD.zero_grad()
        output = netD(real[i:i + 8]).view(-1)
        errD = criterion(output, torch.ones(8))  # error: TW301
        errD.backward()
        optimizerD.step()
    print(epoch, errD.item())
