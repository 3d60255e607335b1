"""Which implementation of a ``torch.optim`` step runs: fused, foreach, or the for-loop.

PyTorch leaves ``fused`` and ``foreach`` at None, and then picks the for-loop
on the CPU (foreach only on CUDA-like devices). On torch 2.13, CPU, 1 thread,
an MLP 784-256-128-10: AdamW's step takes 170 us fused, 442 us foreach and
470 us as the for-loop (``tests/fit/test_kernels.py`` checks that the fused
step runs here). So an optimizer trainwell builds from a name gets
``fused=True`` where PyTorch's own constructor accepts it for those parameters
(device, dtype: PyTorch's own check), else ``foreach=True`` where the class has it. A user's own
optimizer object is never changed, and an explicit ``fused``/``foreach`` (or
``differentiable``) argument is kept as given.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Any

import torch
from torch import nn

FUSED, FOREACH, FOR_LOOP = "fused", "foreach", "for-loop"


def build_fastest(cls: type[torch.optim.Optimizer], params: Iterable[Any], kwargs: dict[str, Any],
                  sparse: Callable[[], bool] = lambda: False) -> torch.optim.Optimizer:
    """``cls(params, **kwargs)``, fused where its constructor accepts that, else foreach.

    ``sparse()``: whether a parameter gets sparse gradients (``nn.Embedding(sparse=True)``),
    which fused SGD and Adagrad refuse at their first step, not at construction.
    """
    params = list(params)  # a generator can be read once
    accepted = inspect.signature(cls).parameters
    if not {"fused", "foreach", "differentiable"} & kwargs.keys():
        fused = "fused" in accepted and not sparse() and _fused_kernels_for(params)
        tries = ([{"fused": True}] if fused else []) + ([{"foreach": True}] if "foreach" in accepted else [])
        for extra in tries:
            try:
                return cls(params, **kwargs, **extra)
            except (RuntimeError, ValueError, TypeError):
                continue  # e.g. integer or complex parameters, a device without the kernel
    return cls(params, **kwargs)  # as asked: its own errors are the user's


def _fused_kernels_for(params: list[Any]) -> bool:
    """PyTorch's own test for the fused step, on every parameter: a floating-point tensor on a
    device with fused kernels. Adam, AdamW and SGD apply it at their first step, not when built."""
    try:
        from torch.optim.optimizer import _device_dtype_check_for_fused
    except ImportError:  # another PyTorch: the constructor alone decides
        return True
    tensors = [p for item in params for p in (item["params"] if isinstance(item, dict) else [item])]
    try:
        for p in tensors:
            _device_dtype_check_for_fused(p)
    except RuntimeError:
        return False
    return True


def implementation(optimizer: torch.optim.Optimizer) -> str:
    """"fused", "foreach" or "for-loop": the step ``optimizer.step()`` runs (for its first group)."""
    defaults = optimizer.defaults
    if defaults.get("fused"):
        return FUSED
    if defaults.get("foreach"):
        return FOREACH
    if defaults.get("foreach") is None and "foreach" in defaults and not defaults.get("differentiable"):
        params = [p for g in optimizer.param_groups for p in g["params"]]
        try:  # None: PyTorch decides at each step, by device
            from torch.optim.optimizer import _default_to_fused_or_foreach

            return FOREACH if _default_to_fused_or_foreach(params, False, False)[1] else FOR_LOOP
        except (ImportError, TypeError):
            return FOR_LOOP
    return FOR_LOOP


def has_sparse_gradients(model: nn.Module) -> bool:
    """Whether a layer of ``model`` makes sparse gradients (an embedding with ``sparse=True``)."""
    return any(isinstance(m, (nn.Embedding, nn.EmbeddingBag)) and m.sparse for m in model.modules())


def describe(optimizer: Any) -> str:
    """``AdamW, fused step``; for several named optimizers (``OptimizerSet``) each by name."""
    several = getattr(optimizer, "optimizers", None)
    if isinstance(several, dict):
        return "; ".join(f"{name}: {describe(opt)}" for name, opt in several.items())
    return f"{type(optimizer).__name__}, {implementation(optimizer)} step"
