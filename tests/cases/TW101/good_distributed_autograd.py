# case: static-only
"""Distributed autograd: gradients live in each iteration's context, not in `.grad`; nothing to zero."""
import torch
import torch.distributed.autograd as dist_autograd
from torch import nn
from torch.distributed.optim import DistributedOptimizer
from torch.distributed.rpc import RRef


def train(model, batches, epochs=2):
    criterion = nn.CrossEntropyLoss()
    opt = DistributedOptimizer(torch.optim.SGD, [RRef(p) for p in model.parameters()], lr=0.05)
    for epoch in range(epochs):
        for x, y in batches:
            with dist_autograd.context() as context_id:
                loss = criterion(model(x), y)
                dist_autograd.backward(context_id, [loss])
                opt.step(context_id)
