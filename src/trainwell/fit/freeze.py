"""Freezing parameters, the way that actually freezes them."""

from __future__ import annotations

import torch
from torch import nn


def freeze(module: nn.Module) -> nn.Module:
    """Stop training ``module``'s parameters (``requires_grad_(False)``) and return it.

    Setting ``module.requires_grad = False`` only adds an attribute; this freezes.

    Example:
        >>> net = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
        >>> _ = freeze(net[0])
        >>> [p.requires_grad for p in net.parameters()]
        [False, False, True, True]
    """
    module.requires_grad_(False)
    return module


def unfreeze(module: nn.Module) -> nn.Module:
    """Train ``module``'s parameters again (``requires_grad_(True)``) and return it."""
    module.requires_grad_(True)
    return module


def trainable_parameters(model: nn.Module) -> list[torch.nn.Parameter]:
    """The parameters that require gradients: what an optimizer should receive."""
    return [p for p in model.parameters() if p.requires_grad]
