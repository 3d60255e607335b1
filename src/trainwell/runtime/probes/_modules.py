"""Facts about a module (cached per module) and its output that several probes ask."""

from __future__ import annotations

import weakref
from typing import Any

import torch
from torch import nn
from torch.nn.modules.batchnorm import _BatchNorm
from torch.nn.modules.dropout import _DropoutNd

_MODE_DEPENDENT = (_DropoutNd, _BatchNorm, nn.AlphaDropout, nn.FeatureAlphaDropout)
# id(module) -> (a weak reference that drops the entry with the module, holds parameters, mode matters);
# a plain dict by id: a WeakKeyDictionary lookup costs several times more on every forward
_facts: dict[int, tuple[weakref.ref[nn.Module], bool, bool]] = {}


def module_facts(module: nn.Module) -> tuple[weakref.ref[nn.Module], bool, bool]:
    """(a weak reference to it, whether it holds parameters, whether its mode matters), cached."""
    entry = _facts.get(id(module))
    if entry is None or entry[0]() is not module:
        key = id(module)
        ref = weakref.ref(module, lambda _, key=key: _facts.pop(key, None))
        entry = (ref, next(module.parameters(), None) is not None, any(isinstance(m, _MODE_DEPENDENT) for m in module.modules()))
        _facts[key] = entry
    return entry


def mode_matters(module: nn.Module) -> bool:
    """Whether train/eval changes what ``module`` computes (it holds Dropout or BatchNorm)."""
    return module_facts(module)[2]


def has_parameters(module: nn.Module) -> bool:
    """Whether ``module`` holds parameters (a loss module does not)."""
    return module_facts(module)[1]


def first_tensor(output: Any) -> torch.Tensor | None:
    """The tensor a forward returned, or the first one of a tuple, list or dict it returned."""
    if isinstance(output, torch.Tensor):
        return output
    values = output.values() if isinstance(output, dict) else output if isinstance(output, (tuple, list)) else ()
    for value in values:  # a plain loop: this runs on every forward
        if isinstance(value, torch.Tensor):
            return value
    return None
