"""A backpropagated loss summed as a float, or replaced by its float before it is kept: nothing outlives the step."""
import torch
from torch import nn
import torch.nn.functional as F


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(8, 4)
        self.dec = nn.Linear(2, 8)

    def forward(self, x):
        h = self.enc(x)
        mu, logvar = h[:, :2], h[:, 2:]
        return self.dec(mu), mu, logvar


def loss_function(recon, x, mu, logvar):
    return F.mse_loss(recon, x) - 0.5 * torch.mean(1 + logvar - mu.pow(2) - logvar.exp())


torch.manual_seed(0)
model = VAE()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
batches = [torch.randn(8, 8) for _ in range(4)]
for epoch in range(2):
    train_loss, kept = 0.0, 0.0
    for x in batches:
        optimizer.zero_grad()
        recon, mu, logvar = model(x)
        loss = loss_function(recon, x, mu, logvar)
        loss.backward()
        train_loss += loss.item()
        optimizer.step()
        loss = loss.item()
        kept += loss
    print(epoch, train_loss / len(batches), kept)
