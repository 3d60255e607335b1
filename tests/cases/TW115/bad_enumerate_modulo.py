"""TW115: the example-script accumulation loop: `(i + 1) % accum == 0` restarts every epoch, 10 batches, accum 4."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
model = nn.Linear(8, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss()
loader = DataLoader(TensorDataset(torch.randn(40, 8), torch.randint(0, 2, (40,))), batch_size=4, shuffle=True)
accum = 4

for epoch in range(3):
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y) / accum
        loss.backward()
        if (i + 1) % accum == 0:  # static: TW115
            optimizer.step()  # runtime: TW115
            optimizer.zero_grad()
