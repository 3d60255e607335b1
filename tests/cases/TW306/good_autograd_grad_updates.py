"""Correct: the second loader (drop_last=True) feeds a fine-tuning pass that trains with `torch.autograd.grad`
and a hand-written update instead of `backward()` and `optimizer.step()`: it is training, where dropping the ragged
last batch is a choice."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
pretrain_set = TensorDataset(torch.randn(64, 8), torch.randint(0, 3, (64,)))
finetune_set = TensorDataset(torch.randn(45, 8), torch.randint(0, 3, (45,)))
pretrain_loader = DataLoader(pretrain_set, batch_size=16, shuffle=True)
finetune_loader = DataLoader(finetune_set, batch_size=16, shuffle=True, drop_last=True)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

for x, y in pretrain_loader:
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()

losses = []
for x, y in finetune_loader:
    with torch.enable_grad():  # gradients on purpose, also when this runs under an evaluation's no_grad
        loss = nn.functional.cross_entropy(model(x), y)
    grads = torch.autograd.grad(loss, list(model.parameters()))
    with torch.no_grad():
        for param, grad in zip(model.parameters(), grads):
            param.sub_(0.01 * grad)
    losses.append(loss.item())
print(sum(losses) / len(losses))
