"""The static checker: reads Python source (never imports or runs it) and
reports the catalog's silent training-loop bugs.

Layers, each built on the one before: ``context`` (imports, names, roles),
``loops`` (training loops and the ordered events of one iteration), ``rules/``
(one file per code), ``runner`` (files, config, noqa, errors). Nothing here
imports torch, so ``trainwell check`` starts fast.
"""

import sys
import types


class _CallableModule(types.ModuleType):
    """``trainwell.check(...)`` is the public function, but ``trainwell.check`` is also this package:
    once the package is imported, Python binds the name to it. Calling the package calls the function,
    so both spellings work whatever was imported first."""

    def __call__(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        from trainwell.check.runner import check

        return check(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
