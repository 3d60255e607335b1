"""TW302: `total /= len(loader)` over .item() means, and a sum of loss tensors divided by the batch count
(30 samples in batches of 8: the last batch of 6 weighs as much as a full one)."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
loader = DataLoader(TensorDataset(torch.randn(30, 8), torch.randint(0, 2, (30,))), batch_size=8, shuffle=True,
                    generator=torch.Generator().manual_seed(0))
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

for epoch in range(2):
    total, tensor_total = 0.0, 0.0
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item()
        tensor_total += loss.detach()
    total /= len(loader)  # error: TW302
    print(epoch, total, tensor_total / len(loader))  # error: TW302
