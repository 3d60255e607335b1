"""Runtime probes: one module per bug code (or small family), named after
what it flags. Each module defines a ``Probe`` subclass listing its codes;
the watcher discovers them, so adding a probe means adding a file.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import ClassVar

from trainwell.runtime.session import SAMPLED, Session


class Probe:
    """Base of the runtime probes: subscribes to events with ``on_<event>`` methods.

    ``counts`` says what a finding's ``count`` counts: every occurrence
    (``OCCURRENCES``), or only those seen on the steps the probe checks
    (``SAMPLED``, the default: a lower bound).
    """

    codes: ClassVar[tuple[str, ...]] = ()
    counts: ClassVar[str] = SAMPLED

    def __init__(self, session: Session) -> None:
        self.session = session


def discover() -> list[type[Probe]]:
    """Every probe class in this package, in module-name order."""
    found: list[type[Probe]] = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        found.extend(
            obj for obj in vars(module).values()
            if isinstance(obj, type) and issubclass(obj, Probe) and obj is not Probe and obj.__module__ == module.__name__
        )
    return found
