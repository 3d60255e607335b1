"""TW304: regression targets made with numpy as a column ([64, 1]) and read through a DataLoader; the prediction is
squeezed to [8], so F.smooth_l1_loss compares [8] with [8, 1] and broadcasts to [8, 8]."""
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

np.random.seed(0)
torch.manual_seed(0)
features = torch.from_numpy(np.random.rand(64, 4).astype(np.float32))
targets = torch.from_numpy(np.random.rand(64).reshape(-1, 1)).float()
loader = DataLoader(TensorDataset(features, targets), batch_size=8, shuffle=True)
fc = nn.Linear(4, 1)
optimizer = torch.optim.SGD(fc.parameters(), lr=0.1)
for epoch in range(2):
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.smooth_l1_loss(fc(x).squeeze(1), y)  # static: TW304
        loss.backward()  # runtime: TW304
        optimizer.step()
    print(epoch, loss.item())
