"""TW107: gradient accumulation without dividing the loss by the number of micro-batches."""

from __future__ import annotations

import ast
from typing import Iterator

from trainwell.lint import events as ev
from trainwell.lint.constants import always_one
from trainwell.lint.context import FileContext, key_of, kwarg
from trainwell.lint.dataflow import Element, reaching
from trainwell.lint.rules import TRAINING
from trainwell.diagnostic import Finding
from trainwell.lint.syntax import walk

CODE = "TW107"
REQUIRES = TRAINING


def check(ctx: FileContext) -> Iterator[Finding]:
    analysis = ctx.analysis
    for back in (e for e in analysis.events if e.kind == ev.BACKWARD and e.grad is not False):
        count = _window(back)
        if count is None or back.arg is None:
            continue
        if _scaled(ctx, back.arg, back.scope, back.line, 0) or always_one(ctx, count):
            continue  # divided already, or a count that can only be 1: no accumulation to divide by
        window = ast.unparse(count)
        yield ctx.finding(
            CODE, back.node,
            f"`{ctx.snippet(back.node)}` runs every micro-batch but the optimizer steps only every {window} of them, and the "
            f"loss is not divided by {window}: the update is {window} times too large.",
            f"Divide the loss by {window} before backward(), e.g. `(loss / {window}).backward()`.",
        )


def _window(back: ev.Event) -> ast.expr | None:
    """The accumulation count (its expression) when ``back`` runs more often than the optimizer steps, else None."""
    frame = back.frame
    if frame is None:
        return None
    steps = [s for s in frame.events if s.kind == ev.STEP and s.compatible(back)]  # not the other branch of an `if`
    for step in steps:
        extra = [w for w in step.periodic if w not in back.periodic]
        if extra:
            return _modulus(extra[-1].test)
    if not steps and frame.kind == "loop" and frame.parent is not None and isinstance(frame.node, ast.For) and not frame.has(ev.ZERO_GRAD):
        last = frame.events[-1].seq
        after = [e for e in frame.parent.events if e.seq > last and e.kind in (ev.STEP, ev.BACKWARD)]
        if after and after[0].kind == ev.STEP:  # the micro-batch loop ends, then the optimizer steps
            it = frame.node.iter
            if isinstance(it, ast.Call) and getattr(it.func, "id", None) == "range" and len(it.args) == 1:
                return it.args[0]
    return None


def _modulus(test: ast.expr) -> ast.expr | None:
    for node in walk(test):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            return node.right
    return None


def _scaled(ctx: FileContext, expr: ast.AST, scope: ast.AST | None, line: int, depth: int) -> bool:
    """Whether the loss was divided (or multiplied) before backward, or summed on purpose."""
    if depth > 6 or scope is None:
        return True  # lost track: stay silent
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Div, ast.Mult, ast.FloorDiv)):
        return True
    if isinstance(expr, ast.Call):
        func = expr.func
        if isinstance(func, ast.Attribute) and func.attr in ("div", "div_", "mul", "mul_", "__truediv__"):
            return True
        reduction = kwarg(expr, "reduction")
        role = ctx.role(key_of(func)) if isinstance(func, (ast.Name, ast.Attribute)) else None
        if role is not None and role.kind == "loss" and isinstance(role.node, ast.Call):
            reduction = reduction or kwarg(role.node, "reduction")
        if isinstance(reduction, ast.Constant) and reduction.value == "sum":
            return True
        if isinstance(func, ast.Name) and func.id in ctx.functions:
            fn = ctx.functions[func.id]
            returns = [n.value for n in walk(fn) if isinstance(n, ast.Return) and n.value is not None]
            return not returns or any(_scaled(ctx, r, fn, 10**9, depth + 1) for r in returns)
        forward = ctx.methods.get(role.cls, {}).get("forward") if role is not None and role.kind == "model" else None
        if forward is not None:  # `model(x, y).backward()` where the model's own forward returns its loss
            returns = [n.value for n in walk(forward) if isinstance(n, ast.Return) and n.value is not None]
            return any(_scaled(ctx, r, forward, 10**9, depth + 1) for r in returns if isinstance(r, ast.Call))
        return False
    if isinstance(expr, Element):
        # `logits, loss = model(X, Y)`: a model's own loss is a mean over its batch, not scaled for accumulation
        return not (isinstance(expr.value, ast.Call) and ctx.is_model(key_of(expr.value.func)))
    if isinstance(expr, ast.Attribute) and expr.attr == "loss" and isinstance(expr.value, ast.Name):
        # `outputs = model(**batch); outputs.loss`: the loss a model computes, a mean over its batch
        made = reaching(ctx, scope, expr.value.id, line)
        return not (len(made) == 1 and isinstance(made[0], ast.Call) and ctx.is_model(key_of(made[0].func)))
    if isinstance(expr, ast.Name):
        values = reaching(ctx, scope, expr.id, line)
        if not values:
            return True  # a parameter or a global: we cannot see how it was made
        for value in values:
            if isinstance(value, ast.AugAssign):
                if isinstance(value.op, (ast.Div, ast.Mult, ast.FloorDiv)):
                    return True
            elif isinstance(value, (ast.For, ast.AsyncFor)) or _scaled(ctx, value, scope, getattr(value, "lineno", line), depth + 1):
                return True
        return False
    return True
