"""Features computed under no_grad by a frozen encoder; only the probe is optimized."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def train_one_epoch(encoder, probe, loader, optimizer):
    probe.train()
    for x, y in loader:
        with torch.no_grad():
            features = encoder(x)
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(probe(features), y)
        loss.backward()
        optimizer.step()
    return loss.item()


torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.1)).requires_grad_(False).eval()
probe = nn.Linear(16, 3)
optimizer = torch.optim.SGD(probe.parameters(), lr=0.05, momentum=0.9)
loader = DataLoader(TensorDataset(torch.randn(32, 6), torch.randint(0, 3, (32,))), batch_size=8,
                    shuffle=True, generator=torch.Generator().manual_seed(0))
for epoch in range(2):
    print(epoch, train_one_epoch(encoder, probe, loader, optimizer))
