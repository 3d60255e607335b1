"""The rules: one module per code, named after what it flags.

A rule module defines ``CODE`` (a catalog code) and ``check(ctx) -> Iterable[Finding]``.
Rules are discovered here, never listed by hand. A rule whose premises include a
training step declares ``REQUIRES = TRAINING``: the runner skips it on a file
where neither the file nor any file of the tree it may import says either word
(a model definition, a data module), which is most of a large project.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache
from types import ModuleType

TRAINING = ("backward(", ".step(")  # a backward pass or an optimizer step written somewhere the file can reach (not "backward compatible")


@lru_cache(maxsize=1)
def all_rules() -> dict[str, ModuleType]:
    """Every rule module, by code."""
    rules: dict[str, ModuleType] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        code = getattr(module, "CODE", None)
        if code is None:
            continue
        if code in rules:
            raise RuntimeError(f"two rules claim {code}: {rules[code].__name__} and {module.__name__}")
        rules[code] = module
    return rules
