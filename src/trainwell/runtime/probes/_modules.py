"""Facts about a module the mode probes ask often, cached per module."""

from __future__ import annotations

import weakref

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
