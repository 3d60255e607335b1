"""Weights round-tripped through safetensors, which stores tensors only (no pickle)."""
import torch
from safetensors.torch import load as load_safetensors
from safetensors.torch import save as save_safetensors
from torch import nn


def train_one_epoch(model, X, Y, optimizer):
    model.train()
    perm = torch.randperm(len(X))
    for start in range(0, len(X), 8):
        idx = perm[start:start + 8]
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(X[idx]), Y[idx])
        loss.backward()
        optimizer.step()
    return loss.item()


torch.manual_seed(0)
X = torch.randn(32, 4)
Y = X.sum(1, keepdim=True)
model = nn.Linear(4, 1)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
print(0, train_one_epoch(model, X, Y, optimizer))
blob = save_safetensors({k: v.contiguous() for k, v in model.state_dict().items()})
model.load_state_dict(load_safetensors(blob))
for epoch in range(1, 3):
    print(epoch, train_one_epoch(model, X, Y, optimizer))
