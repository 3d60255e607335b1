"""TW103: under gradient accumulation the clip runs before every micro-batch's backward, while the step runs only
when the window closes: the step's gradients include the last micro-batch unclipped. Moving the clip after
backward() would clip every partial sum instead: the fix is to clip inside the window, right before the step, so
no automatic fix is offered."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
ds = TensorDataset(torch.randn(32, 8), torch.randint(0, 2, (32,)))
loader = DataLoader(ds, batch_size=4, shuffle=True, generator=torch.Generator().manual_seed(0))
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
accum = 2

for epoch in range(2):
    for i, (x, y) in enumerate(loader):
        loss = nn.functional.cross_entropy(model(x), y) / accum
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # error: TW103
        loss.backward()
        if (i + 1) % accum == 0:
            optimizer.step()
            optimizer.zero_grad()
    print(epoch, loss.item())
