"""trainwell: a PyTorch training loop that is right by construction, and
checkers that find the silent bugs in loops written by hand.

The public names are imported lazily, so that ``trainwell check`` (which never
needs PyTorch) starts in milliseconds.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_PUBLIC = {
    "Trainer": "trainwell.fit.trainer",
    "load_weights": "trainwell.fit.weights",
    "watch": "trainwell.runtime.watcher",
    "check": "trainwell.lint.runner",
    "measure_memory": "trainwell.memory.measure",
    "estimate_memory": "trainwell.memory.estimate",
    "Finding": "trainwell.diagnostic",
    "TrainwellError": "trainwell.errors",
}

__all__ = ["__version__", *_PUBLIC]


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        return getattr(importlib.import_module(_PUBLIC[name]), name)
    raise AttributeError(f"module 'trainwell' has no attribute {name!r}")


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext trainwell``: the ``%%watch`` and ``%watch on|off`` magics (IPython is imported only then)."""
    from trainwell.runtime.notebook_magic import load

    load(ipython)
