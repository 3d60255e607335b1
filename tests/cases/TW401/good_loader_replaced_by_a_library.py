"""A privacy library hands back its own loader (Poisson sampling) in place of the one built here."""
import torch
from torch import nn
from torch.utils.data import DataLoader, RandomSampler, TensorDataset


class PrivacyEngine:
    """Stands in for a library whose make_private() returns a loader with its own sampler."""

    def make_private(self, module, optimizer, data_loader):
        sampled = DataLoader(data_loader.dataset, batch_size=data_loader.batch_size, sampler=RandomSampler(data_loader.dataset))
        return module, optimizer, sampled


torch.manual_seed(0)
dataset = TensorDataset(torch.randn(32, 6), torch.randint(0, 2, (32,)))
train_loader = DataLoader(dataset, batch_size=8)
model = nn.Linear(6, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
model, optimizer, train_loader = PrivacyEngine().make_private(model, optimizer, train_loader)
for epoch in range(3):
    for x, y in train_loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
