"""TW204: a graph-carrying tensor is accumulated or stored without .item() / .detach()."""

from __future__ import annotations

import ast
from typing import Iterator

from trainwell.lint import events as ev
from trainwell.lint.context import FileContext, key_of
from trainwell.lint.dataflow import Graph, definitions
from trainwell.diagnostic import Edit, Finding, Fix

CODE = "TW204"


def check(ctx: FileContext) -> Iterator[Finding]:
    analysis = ctx.analysis
    for event in analysis.events:
        if event.kind not in (ev.APPEND, ev.AUG, ev.ASSIGN) or event.scope is None or event.key is None:
            continue
        added = _added(event)
        if added is None or event.grad is False:
            continue
        if event.grad is None and not (event.frame is not None and event.frame.has(ev.BACKWARD)):
            continue
        graph = Graph(ctx, event.scope, event.line + 1)
        if not graph.connected(added):
            continue
        raw = key_of(event.node.func.value) if isinstance(event.node, ast.Call) else key_of(_target(event.node))  # type: ignore[attr-defined]
        if raw is None or _feeds_backward(ctx, analysis, raw, event):
            continue
        stmt = ctx.statement_of(event.node) or event.node
        verb = "appends" if event.kind == ev.APPEND else "adds"
        yield ctx.finding(
            CODE, stmt,
            f"`{ctx.snippet(stmt)}` {verb} a tensor that still carries its autograd graph (`{ctx.snippet(added)}`) to "
            f"`{raw}`, which outlives the iteration: every step's graph stays in memory.",
            "Store `loss.item()` (a float) or `tensor.detach()` instead (`.item()` syncs with the GPU each step).",
            _fix(ctx, added, event.scope, event.line),
        )


def _target(node: ast.AST) -> ast.AST | None:
    if isinstance(node, ast.AugAssign):
        return node.target
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        return node.targets[0]
    return None


def _added(event: ev.Event) -> ast.expr | None:
    """The value that goes into the accumulator, or None when the statement is not an accumulation."""
    node = event.node
    if event.kind == ev.APPEND:
        return event.arg  # type: ignore[return-value]
    if event.kind == ev.AUG and isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add):
        return node.value
    if event.kind == ev.ASSIGN and isinstance(node, ast.Assign) and isinstance(node.value, ast.BinOp) and isinstance(node.value.op, ast.Add):
        target = key_of(_target(node))
        if key_of(node.value.left) == target:
            return node.value.right
        if key_of(node.value.right) == target:
            return node.value.left
    return None


def _feeds_backward(ctx: FileContext, analysis, acc: str, event: ev.Event) -> bool:
    """Whether a backward() (anywhere in the same function or its callers) is computed from the accumulator."""
    for back in analysis.events:
        if back.kind != ev.BACKWARD or back.arg is None or back.scope is None:
            continue
        if acc in back.subst.values():
            return True  # handed to the helper that runs backward (finish_episode(policy, saved_log_probs))
        if acc in _names(ctx, back.arg, back.scope, set()):
            return True
    return False


def _names(ctx: FileContext, expr: ast.AST, scope: ast.AST, seen: set[str]) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(expr):
        key = key_of(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
        if key is None or key in seen:
            continue
        seen.add(key)
        found.add(key)
        if isinstance(node, ast.Name):
            for _, value in definitions(ctx, scope).get(node.id, []):
                source = value.value if isinstance(value, ast.AugAssign) else value
                if not isinstance(source, (ast.For, ast.AsyncFor)):
                    found |= _names(ctx, source, scope, seen)
    return found


def _fix(ctx: FileContext, added: ast.expr, scope: ast.AST, line: int) -> Fix | None:
    """Append ``.detach()`` to the one graph-carrying name in the accumulated value.

    ``.detach()`` rather than ``.item()``: it keeps the value a tensor, so later
    uses (``torch.stack(losses)``, ``total.item()``) still work; the fix is safe.
    """
    names = [n for n in ast.walk(added) if isinstance(n, ast.Name) and Graph(ctx, scope, line + 1).connected(n)]
    if len(names) != 1:
        return None
    name = names[0]
    line_no = name.end_lineno or name.lineno
    column = ctx.char_col(line_no, name.end_col_offset or 0)
    return Fix(f"use `{name.id}.detach()`", (Edit(line_no, column, line_no, column, ".detach()"),), "safe")
