"""Facts about a module (cached per module) and its output that several probes ask."""

from __future__ import annotations

import weakref
from typing import Any

import torch
from torch import nn
from torch.nn.modules.batchnorm import _BatchNorm
from torch.nn.modules.dropout import _DropoutNd

_MODE_DEPENDENT = (_DropoutNd, _BatchNorm, nn.AlphaDropout, nn.FeatureAlphaDropout)
_mode_cache: weakref.WeakKeyDictionary[nn.Module, bool] = weakref.WeakKeyDictionary()
_params_cache: weakref.WeakKeyDictionary[nn.Module, bool] = weakref.WeakKeyDictionary()


def mode_matters(module: nn.Module) -> bool:
    """Whether train/eval changes what ``module`` computes (it holds Dropout or BatchNorm)."""
    known = _mode_cache.get(module)
    if known is None:
        known = any(isinstance(m, _MODE_DEPENDENT) for m in module.modules())
        _mode_cache[module] = known
    return known


def has_parameters(module: nn.Module) -> bool:
    """Whether ``module`` holds parameters (a loss module does not)."""
    known = _params_cache.get(module)
    if known is None:
        known = next(module.parameters(), None) is not None
        _params_cache[module] = known
    return known


def first_tensor(output: Any) -> torch.Tensor | None:
    """The tensor a forward returned, or the first one of a tuple, list or dict it returned."""
    if isinstance(output, torch.Tensor):
        return output
    values = output.values() if isinstance(output, dict) else output if isinstance(output, (tuple, list)) else ()
    return next((v for v in values if isinstance(v, torch.Tensor)), None)
