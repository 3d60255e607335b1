"""TW302: an epoch metric computed as the sum of per-batch means divided by the number of batches.

Silent when every batch is full: ``drop_last=True``, the default batch size of
1, or a dataset whose size (read from literals) divides by the batch size.
"""

from __future__ import annotations

import ast
from typing import Iterator

from trainwell.lint.context import FileContext, key_of, kwarg, method_name
from trainwell.lint.dataflow import reaching, scope_nodes
from trainwell.diagnostic import Finding

CODE = "TW302"


def check(ctx: FileContext) -> Iterator[Finding]:
    if ".item()" not in ctx.source:
        return  # the per-batch means this rule looks for are read with .item()
    scopes = [ctx.tree, *ctx.functions.values(), *(m for ms in ctx.methods.values() for m in ms.values())]
    for scope in scopes:
        loops = [n for n in scope_nodes(ctx, scope) if isinstance(n, (ast.For, ast.AsyncFor))]
        for node in scope_nodes(ctx, scope):
            if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)):
                continue
            acc = _accumulator(node.left)
            if acc is None:
                continue
            loop = next((l for l in loops if l.end_lineno and l.end_lineno < node.lineno and _accumulates_means(l, acc)), None)
            if loop is None or not _counts_batches(node.right, acc, loop):
                continue
            if _full_batches(ctx, loop):
                continue
            # Proven only over a DataLoader built here (its last batch is smaller unless drop_last or sizes divide);
            # over an iterable of unknown kind (a list of samples, a library's iterator) it is a preview finding.
            proven = _over_loader(ctx, loop) and not any(isinstance(n, ast.Break) for n in ast.walk(loop))
            yield ctx.finding(
                CODE, node,
                f"`{ctx.snippet(node)}` averages per-batch means over the number of batches: the last, smaller batch "
                "weighs as much as a full one, so the epoch value is biased.",
                "Weight each batch by its size (`total += loss.item() * len(y)`) and divide by the number of samples.",
                preview=not proven,
            )


def _accumulator(left: ast.expr) -> str | None:
    """``total`` for ``total / n`` and ``sum(values) / n``."""
    if isinstance(left, ast.Call) and key_of(left.func) == "sum" and len(left.args) == 1:
        return key_of(left.args[0])
    return key_of(left)


def _accumulates_means(loop: ast.AST, acc: str) -> bool:
    """Whether the loop adds an unweighted per-batch mean (a ``.item()`` without a product) to ``acc``."""
    for node in ast.walk(loop):
        value = None
        if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) and key_of(node.target) == acc:
            value = node.value
        elif isinstance(node, ast.Call) and method_name(node) == "append" and key_of(node.func.value) == acc and node.args:  # type: ignore[attr-defined]
            value = node.args[0]
        if value is None:
            continue
        has_item = any(method_name(n) == "item" for n in ast.walk(value))
        if any(method_name(n) == "sum" or isinstance(n, ast.Constant) and n.value == "sum" for n in ast.walk(value)):
            continue  # a per-batch sum (correct counts, reduction="sum"), not a mean
        weighted = any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult) for n in ast.walk(value))
        if has_item and not weighted:
            return True
    return False


def _counts_batches(right: ast.expr, acc: str, loop: ast.For | ast.AsyncFor) -> bool:
    """``len(loader)``, ``len(values)``, ``i + 1`` / a counter of iterations."""
    if isinstance(right, ast.Call) and key_of(right.func) == "len" and right.args:
        counted = key_of(right.args[0])
        return counted is not None and (counted == acc or counted == key_of(_unwrap(loop.iter)))
    names = {n.id for n in ast.walk(right) if isinstance(n, ast.Name)}
    targets = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
    if names & targets and isinstance(loop.iter, ast.Call) and key_of(loop.iter.func) == "enumerate":
        return True
    for node in ast.walk(loop):
        if isinstance(node, ast.AugAssign) and key_of(node.target) in names and isinstance(node.value, ast.Constant) and node.value.value == 1:
            return True
    return False


def _unwrap(node: ast.expr) -> ast.expr:
    while isinstance(node, ast.Call) and key_of(node.func) in ("enumerate", "tqdm", "tqdm.tqdm", "iter") and node.args:
        node = node.args[0]
    return node


def _loop_keys(ctx: FileContext, loop: ast.For | ast.AsyncFor) -> set[str | None]:
    return {f.iter_key for f in ctx.analysis.frames if f.node is loop and f.iter_key} or {key_of(_unwrap(loop.iter))}


def _over_loader(ctx: FileContext, loop: ast.For | ast.AsyncFor) -> bool:
    """Whether the loop iterates batches the analysis knows: a DataLoader (built here, or handed to this helper), or
    slices by a stride (``for start in range(0, len(X), batch_size)``)."""
    stride = _unwrap(loop.iter)
    if isinstance(stride, ast.Call) and key_of(stride.func) == "range" and len(stride.args) == 3:
        return True
    return any((role := ctx.role(key)) is not None and role.kind == "loader" for key in _loop_keys(ctx, loop))


def _full_batches(ctx: FileContext, loop: ast.For | ast.AsyncFor) -> bool:
    """Whether every batch of the loop's loader(s) is provably full."""
    for key in _loop_keys(ctx, loop):
        role = ctx.role(key)
        if role is None or role.kind != "loader" or not isinstance(role.node, ast.Call):
            continue
        call = role.node
        drop = kwarg(call, "drop_last")
        if isinstance(drop, ast.Constant) and drop.value is True:
            return True
        batch = kwarg(call, "batch_size") or (call.args[1] if len(call.args) > 1 else None)
        if batch is None or isinstance(batch, ast.Constant) and batch.value == 1:
            return True  # batches of one sample: the mean of means is the mean
        size = _size(ctx, call.args[0] if call.args else kwarg(call, "dataset"), 0)
        if isinstance(batch, ast.Constant) and isinstance(batch.value, int) and size is not None and batch.value and size % batch.value == 0:
            return True
    return False


def _size(ctx: FileContext, node: ast.expr | None, depth: int) -> int | None:
    """The number of rows, when literals tell it: ``torch.randn(30, 8)``, ``X[32:]``, ``TensorDataset(X, Y)``."""
    if node is None or depth > 6:
        return None
    if isinstance(node, ast.Name):
        values = reaching(ctx, ctx.tree, node.id, 10**9)
        return _size(ctx, values[0], depth + 1) if len(values) == 1 and isinstance(values[0], ast.expr) else None
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice) and node.slice.step is None:
        total = _size(ctx, node.value, depth + 1)
        lower, upper = node.slice.lower, node.slice.upper
        if total is None or not all(b is None or isinstance(b, ast.Constant) and isinstance(b.value, int) for b in (lower, upper)):
            return None
        return len(range(total)[slice(lower.value if lower else None, upper.value if upper else None)])  # type: ignore[union-attr]
    if isinstance(node, ast.Call):
        name = (ctx.call_name(node) or key_of(node.func) or "").rsplit(".", 1)[-1]
        if name == "TensorDataset" and node.args:
            return _size(ctx, node.args[0], depth + 1)
        shape = node.args[2] if name == "randint" and len(node.args) > 2 else (kwarg(node, "size") if name == "randint" else (node.args[0] if node.args else None))
        if name in ("randn", "rand", "zeros", "ones", "empty", "randint", "arange") and shape is not None:
            first = shape.elts[0] if isinstance(shape, (ast.Tuple, ast.List)) and shape.elts else shape
            return first.value if isinstance(first, ast.Constant) and isinstance(first.value, int) else None
    return None
