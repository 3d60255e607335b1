"""Correct: the base model is frozen, then a helper adds trainable low-rank adapters to it before the optimizer is
built over `model.parameters()` (the LoRA fine-tuning form)."""
import torch
from torch import nn


class LoRALinear(nn.Module):
    def __init__(self, base, rank=2):
        super().__init__()
        self.base = base
        self.a = nn.Parameter(torch.randn(base.in_features, rank) * 0.01)
        self.b = nn.Parameter(torch.zeros(rank, base.out_features))

    def forward(self, x):
        return self.base(x) + x @ self.a @ self.b


def add_adapters(model):
    for name, child in model.named_children():
        if isinstance(child, nn.Linear):
            setattr(model, name, LoRALinear(child))


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
for param in model.parameters():
    param.requires_grad = False
add_adapters(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
x, y = torch.randn(8, 8), torch.randint(0, 2, (8,))
for step in range(3):
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
