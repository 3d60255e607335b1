"""A detached output next to inputs that carry (or may carry) a graph: the relativistic GAN's `fake - real.detach()`,
and a target computed by a module the analysis cannot name (built by `getattr`), which may well be trained.
Neither is a claim the checker can make."""
import torch
from torch import nn

torch.manual_seed(0)
generator = nn.Linear(4, 8)
discriminator = nn.Linear(8, 1)
loss_fn = nn.BCEWithLogitsLoss()
optimizer_g = torch.optim.Adam(generator.parameters(), lr=2e-4)
optimizer_d = torch.optim.Adam(discriminator.parameters(), lr=2e-4)
real = torch.randn(6, 8)
valid = torch.ones(6, 1)
for step in range(3):
    fake_pred = discriminator(generator(torch.randn(6, 4)))
    real_pred = discriminator(real)
    g_loss = loss_fn(fake_pred - real_pred.detach(), valid)
    optimizer_g.zero_grad()
    g_loss.backward()
    optimizer_g.step()
    optimizer_d.zero_grad()
    d_loss = loss_fn(discriminator(real) - discriminator(generator(torch.randn(6, 4)).detach()), valid)
    d_loss.backward()
    optimizer_d.step()

student = nn.Linear(8, 4).requires_grad_(False)
projector = getattr(nn, "Linear")(8, 4)
optimizer = torch.optim.SGD(projector.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(5, 8)
    loss = nn.functional.mse_loss(student(x).detach(), projector(x))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(g_loss.item(), loss.item())
