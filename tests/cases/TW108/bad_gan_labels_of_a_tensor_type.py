"""TW108: a GAN's generator step whose adversarial loss reads `discriminator(fake).detach()`; the "valid" labels
are built from a tensor type chosen by device (`Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor`),
data without a graph, so the generator gets no gradient at all."""
import torch
from torch import nn

torch.manual_seed(0)
cuda = torch.cuda.is_available()
Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
generator = nn.Sequential(nn.Linear(4, 8), nn.Tanh())
discriminator = nn.Sequential(nn.Linear(8, 1), nn.Sigmoid())
adversarial_loss = nn.BCELoss()
optimizer_g = torch.optim.Adam(generator.parameters(), lr=2e-4)

for step in range(3):
    valid = Tensor(6, 1).fill_(1.0)
    z = Tensor(torch.randn(6, 4).numpy())
    optimizer_g.zero_grad()
    gen_imgs = generator(z)
    g_loss = adversarial_loss(discriminator(gen_imgs).detach(), valid).requires_grad_()
    g_loss.backward()  # error: TW108
    optimizer_g.step()
print(g_loss.item())
