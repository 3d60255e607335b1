"""Every call of a loss (an instance such as ``criterion(...)`` or ``F.cross_entropy(...)``) and its input."""

from __future__ import annotations

import ast
from typing import Iterator

from trainwell.lint.context import FileContext, key_of
from trainwell.lint.dataflow import scope_nodes
from trainwell.lint.events import loss_class


def loss_calls(ctx: FileContext, wanted: set[str]) -> Iterator[tuple[ast.Call, str, ast.expr, ast.AST]]:
    """(call, loss class, first argument, enclosing scope) for each call of a loss in ``wanted``."""
    found = []
    for node in ctx.calls:
        loss = loss_class(ctx, node, key_of(node.func))
        if loss in wanted:
            first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "input"), None)
            if first is not None:
                found.append((node, loss, first))
    if not found:
        return
    scopes = [ctx.tree, *ctx.functions.values(), *(m for ms in ctx.methods.values() for m in ms.values())]
    where = {id(n): scope for scope in scopes for n in scope_nodes(ctx, scope)}
    for node, loss, first in found:
        scope = where.get(id(node))
        if scope is not None:
            yield node, loss, first, scope
