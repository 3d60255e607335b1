"""reduction='sum' on purpose: the LR is set per sample, so summing over the window is the intent."""
import torch
from torch import nn

torch.manual_seed(0)
X = torch.randn(32, 8)
y = torch.randint(0, 2, (32,))
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
# Sum-based LR: every sample of the 16-sample window contributes lr_per_sample.
lr_per_sample = 0.005
optimizer = torch.optim.SGD(model.parameters(), lr=lr_per_sample)
criterion = nn.CrossEntropyLoss(reduction="sum")
accum_steps = 4

for epoch in range(2):
    perm = torch.randperm(len(X))
    for i, start in enumerate(range(0, len(X), 4)):
        idx = perm[start:start + 4]
        loss = criterion(model(X[idx]), y[idx])
        loss.backward()
        if (i + 1) % accum_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
    print(epoch, loss.item())
