"""TW501: an nn.Module subclass whose __init__ never calls super().__init__()."""

from __future__ import annotations

import ast
from typing import Iterator

from trainwell.lint.context import FileContext
from trainwell.lint.dataflow import scope_nodes
from trainwell.diagnostic import Finding

CODE = "TW501"


def check(ctx: FileContext) -> Iterator[Finding]:
    for name, cls in ctx.classes.items():
        init = ctx.methods.get(name, {}).get("__init__")
        if init is None or not ctx.is_module_class(name):
            continue
        if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "__init__" for n in scope_nodes(ctx, init)):
            continue
        yield ctx.finding(
            CODE, init,
            f"`{name}.__init__` never calls `super().__init__()`: the first submodule or parameter assigned raises "
            "(\"cannot assign module before Module.__init__() call\"), or the module silently lacks its registries.",
            "Call `super().__init__()` as the first statement of `__init__`.",
        )
