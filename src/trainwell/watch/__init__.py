"""The runtime checker: `trainwell run` and `trainwell.watch()`.

Hooks (``hooks.py``) turn PyTorch calls into events (``events.py``), probes
(``probes/``, one file per code) turn events into findings (``session.py``).
Nothing here is imported by ``import trainwell``; torch loads on first use.
"""

import sys
import types
from typing import Any


class _CallableModule(types.ModuleType):
    """`trainwell.watch` names both this package and the public `watch()`.

    Importing ``trainwell.watch.watcher`` makes the package an attribute of
    ``trainwell``, which hides the lazily exported function; calling the
    package therefore builds the watcher, so ``trainwell.watch(...)`` works
    whichever of the two the name resolves to.
    """

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from trainwell.watch.watcher import watch

        return watch(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
