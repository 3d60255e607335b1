# case: static-only
"""TW304: sizes from constants and a batch size from the command line: [N, 1] predictions against [N] targets."""
import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

SAMPLES, FEATURES = 1000, 13
parser = argparse.ArgumentParser()
parser.add_argument("--batch-size", type=int, default=32)
args = parser.parse_args()
features = torch.randn(SAMPLES, FEATURES)
prices = torch.randn(SAMPLES)
loader = DataLoader(TensorDataset(features, prices), batch_size=args.batch_size, shuffle=True)
model = nn.Sequential(nn.Linear(FEATURES, 64), nn.ReLU(), nn.Linear(64, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
loss_fn = nn.HuberLoss()
for epoch in range(20):
    for batch_features, batch_prices in loader:
        loss = loss_fn(model(batch_features), batch_prices)  # error: TW304
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
