"""How much memory training needs, and what each saving buys.

``estimate_memory`` (analytic, pure Python) and ``measure_memory`` (one real
step of a model) return the same ``MemoryReport``; ``trainwell memory`` prints
it as a table or JSON. Imported lazily: ``trainwell.estimate_memory`` never
imports torch.
"""

from __future__ import annotations

from typing import Any

__all__ = ["estimate_memory", "measure_memory", "MemoryReport", "WhatIf", "LayerUsage"]


def __getattr__(name: str) -> Any:
    if name == "estimate_memory":
        from trainwell.memory.estimate import estimate_memory

        return estimate_memory
    if name == "measure_memory":
        from trainwell.memory.measure import measure_memory

        return measure_memory
    if name in ("MemoryReport", "WhatIf", "LayerUsage"):
        from trainwell.memory import report

        return getattr(report, name)
    raise AttributeError(f"module 'trainwell.memory' has no attribute {name!r}")
