"""TW304: a least-squares GAN whose discriminator ends in nn.Linear(..., 1) ([N, 1]) while the adversarial ground
truths are built without their column (`Tensor(imgs.shape[0]).fill_(1.0)`, [N]): MSELoss compares every
validity with every label."""
import argparse

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

opt = argparse.Namespace(batch_size=8, latent_dim=4, channels=1, img_size=8)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Sequential(nn.Linear(opt.latent_dim, 16 * 4 * 4))
        self.conv_blocks = nn.Sequential(nn.Upsample(scale_factor=2), nn.Conv2d(16, opt.channels, 3, padding=1), nn.Tanh())

    def forward(self, z):
        out = self.l1(z)
        out = out.view(out.shape[0], 16, 4, 4)
        img = self.conv_blocks(out)
        return img


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()

        def block(in_filters, out_filters):
            return [nn.Conv2d(in_filters, out_filters, 3, 2, 1), nn.LeakyReLU(0.2), nn.Dropout2d(0.25)]

        self.model = nn.Sequential(*block(opt.channels, 8), *block(8, 16))
        self.adv_layer = nn.Linear(16 * 2 * 2, 1)

    def forward(self, img):
        out = self.model(img)
        out = out.view(out.shape[0], -1)
        validity = self.adv_layer(out)
        return validity


torch.manual_seed(0)
np.random.seed(0)
generator, discriminator = Generator(), Discriminator()
adversarial_loss = nn.MSELoss()
optimizer_G = torch.optim.Adam(generator.parameters(), lr=2e-4)
optimizer_D = torch.optim.Adam(discriminator.parameters(), lr=2e-4)
dataloader = DataLoader(TensorDataset(torch.randn(24, 1, 8, 8)), batch_size=opt.batch_size, shuffle=True)
Tensor = torch.FloatTensor
for epoch in range(2):
    for i, (imgs,) in enumerate(dataloader):
        valid = Tensor(imgs.shape[0]).fill_(1.0)
        fake = Tensor(imgs.shape[0]).fill_(0.0)
        optimizer_G.zero_grad()
        z = Tensor(np.random.normal(0, 1, (imgs.shape[0], opt.latent_dim)))
        gen_imgs = generator(z)
        g_loss = adversarial_loss(discriminator(gen_imgs), valid)  # error: TW304
        g_loss.backward()
        optimizer_G.step()
        optimizer_D.zero_grad()
        real_loss = adversarial_loss(discriminator(imgs), valid)  # static: TW304
        fake_loss = adversarial_loss(discriminator(gen_imgs.detach()), fake)  # error: TW304
        d_loss = 0.5 * (real_loss + fake_loss)
        d_loss.backward()
        optimizer_D.step()
    print(epoch, d_loss.item(), g_loss.item())
