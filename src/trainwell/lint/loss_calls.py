"""Every call of a loss (an instance such as ``criterion(...)`` or ``F.cross_entropy(...)``) and its input."""

from __future__ import annotations

import ast
from typing import Iterator

from trainwell.lint.context import FileContext, key_of
from trainwell.lint.dataflow import scope_nodes
from trainwell.lint.events import loss_class


_WORDS = ("loss", "Loss", "cross_entropy", "kl_div")  # every loss class and functional loss contains one


def loss_calls(ctx: FileContext, wanted: set[str]) -> Iterator[tuple[ast.Call, str, ast.expr, ast.AST]]:
    """(call, loss class, first argument, enclosing scope) for each call of a loss in ``wanted``."""
    for node, loss, first, scope in _all_loss_calls(ctx):
        if loss in wanted:
            yield node, loss, first, scope


def _all_loss_calls(ctx: FileContext) -> list[tuple[ast.Call, str, ast.expr, ast.AST]]:
    """Every loss call of the file, found once and shared by the rules that read them."""
    cached = ctx.__dict__.get("_loss_calls")
    if cached is not None:
        return cached
    found = []
    if any(word in ctx.source for word in _WORDS):  # a file that never says any of them calls no loss (roles cost)
        for node in ctx.calls:
            loss = loss_class(ctx, node, key_of(node.func))
            if loss is not None:
                first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "input"), None)
                if first is not None:
                    found.append((node, loss, first))
    calls = []
    if found:
        scopes = [ctx.tree, *ctx.functions.values(), *(m for ms in ctx.methods.values() for m in ms.values())]
        where = {id(n): scope for scope in scopes for n in scope_nodes(ctx, scope)}
        calls = [(node, loss, first, where[id(node)]) for node, loss, first in found if id(node) in where]
    ctx.__dict__["_loss_calls"] = calls
    return calls
