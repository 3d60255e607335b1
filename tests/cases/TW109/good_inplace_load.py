"""load_state_dict without assign copies into the existing Parameters: the optimizer stays valid."""
import io

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def make_model():
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))


def train_one_epoch(model, loader, optimizer):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
    return loss.item()


torch.manual_seed(0)
buffer = io.BytesIO()
torch.save(make_model().state_dict(), buffer)
buffer.seek(0)

model = make_model()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
model.load_state_dict(torch.load(buffer, weights_only=True))

X = torch.randn(32, 6)
loader = DataLoader(TensorDataset(X, X.sum(1, keepdim=True)), batch_size=8, shuffle=True,
                    generator=torch.Generator().manual_seed(0))
for epoch in range(2):
    print(epoch, train_one_epoch(model, loader, optimizer))
