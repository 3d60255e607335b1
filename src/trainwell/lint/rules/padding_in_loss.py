"""TW305: targets padded with a value that CrossEntropyLoss / NLLLoss does not ignore.

Premises, each read from the file: the target of a cross-entropy or NLL loss
comes (through reshapes, slices and the loop over a DataLoader whose
``collate_fn`` is a local function) from ``pad_sequence`` or ``F.pad`` with a
literal padding value; the loss's ``ignore_index`` is a literal (or the
default -100) different from it; the loss is reduced (``reduction='none'``
leaves room for a mask, so it is silent).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from trainwell.diagnostic import Finding
from trainwell.lint.context import FileContext, key_of, kwarg, method_name
from trainwell.lint.dataflow import reaching
from trainwell.lint.loss_calls import loss_calls
from trainwell.lint.rules._data import (
    argument,
    loader_argument,
    qual_last,
    single_value,
    value_of,
)

CODE = "TW305"
_KEEP = {"view", "reshape", "flatten", "contiguous", "long", "to", "cuda", "cpu", "clone", "detach", "int"}
_DEFAULT_IGNORE = -100


def check(ctx: FileContext) -> Iterator[Finding]:
    if "pad" not in ctx.source:
        return
    for call, loss, _, scope in loss_calls(ctx, {"CrossEntropyLoss", "NLLLoss"}):
        target = call.args[1] if len(call.args) > 1 else kwarg(call, "target")
        options = _loss_options(ctx, call)
        if target is None or options is None:
            continue
        ignore, reduction = options
        if reduction == "none":
            continue
        found = _pad_value(ctx, target, scope, call.lineno, 0)
        if found is None or found[0] == ignore:
            continue
        value, pad = found
        yield ctx.finding(
            CODE, call,
            f"`{ctx.snippet(call)}`: the targets `{ctx.snippet(target)}` are padded with {value} "
            f"(`{ctx.snippet(pad, 40)}`, line {pad.lineno}) but {loss} ignores only {ignore}: every padding position is "  # type: ignore[attr-defined]
            f"trained as a real class {value}, and padding dominates the loss of short sequences.",
            f"Pad the targets with {ignore} (padding_value={ignore}), or pass ignore_index={value} to {loss}.",
        )


def _loss_options(ctx: FileContext, call: ast.Call) -> tuple[int, str | None] | None:
    """(ignore_index, reduction) of a loss call; None when either is not a literal."""
    role = ctx.role(key_of(call.func))
    source = role.node if role is not None and role.kind == "loss" and isinstance(role.node, ast.Call) else call
    if any(k.arg is None for k in source.keywords):
        return None
    ignore = kwarg(source, "ignore_index")
    reduction = kwarg(source, "reduction")
    if ignore is None:
        ignore_value = _DEFAULT_IGNORE
    else:
        value = _constant_int(ctx, ignore)
        if value is None:
            return None
        ignore_value = value
    if reduction is not None and not (isinstance(reduction, ast.Constant) and isinstance(reduction.value, str)):
        return None
    return ignore_value, reduction.value if reduction is not None else None  # type: ignore[union-attr]


def _constant_int(ctx: FileContext, node: ast.AST | None) -> int | None:
    """A literal, or a name the file assigns one literal once (``PAD_IDX = 0``)."""
    value = _literal_int(node)
    if value is None and isinstance(node, ast.Name):
        value = _literal_int(single_value(ctx, node))
    return value


def _literal_int(node: ast.AST | None) -> int | None:
    """``-100``, ``0`` or ``0.0`` (a whole float pads integer targets with that integer)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _literal_int(node.operand)
        return -inner if inner is not None else None
    if isinstance(node, ast.Constant) and type(node.value) in (int, float) and float(node.value).is_integer():
        return int(node.value)
    return None


def _pad_value(ctx: FileContext, node: ast.AST | None, scope: ast.AST, line: int, depth: int) -> tuple[int, ast.Call] | None:
    """(padding value, the padding call) when ``node`` holds a tensor padded with a literal value."""
    if node is None or depth > 10:
        return None
    if isinstance(node, ast.Name):
        values = reaching(ctx, scope, node.id, line)
        if len(values) != 1:
            return None
        value = values[0]
        if isinstance(value, (ast.For, ast.AsyncFor)):
            return _from_loader(ctx, value, node.id, None, depth)
        if isinstance(value, ast.AugAssign):
            return None
        return _pad_value(ctx, value, scope, getattr(value, "lineno", line), depth + 1)
    if isinstance(node, ast.Subscript):
        key = node.slice.value if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str) else None
        if key is not None and isinstance(node.value, ast.Name):  # batch["labels"]
            values = reaching(ctx, scope, node.value.id, line)
            if len(values) == 1 and isinstance(values[0], (ast.For, ast.AsyncFor)):
                return _from_loader(ctx, values[0], node.value.id, key, depth)
            return None
        return _pad_value(ctx, node.value, scope, line, depth + 1)
    if not isinstance(node, ast.Call):
        return None
    qual = ctx.call_name(node) or ""
    last = qual.rsplit(".", 1)[-1]
    if qual.startswith("torch") and last == "pad_sequence":
        if any(k.arg is None for k in node.keywords):
            return None
        given = argument(node, "padding_value", ("sequences", "batch_first", "padding_value"))
        value = 0 if given is None else _constant_int(ctx, given)
        return (value, node) if value is not None else None
    if qual.startswith("torch") and last == "pad" and "functional" in qual:
        given = argument(node, "value", ("input", "pad", "mode", "value"))
        value = 0 if given is None else _constant_int(ctx, given)
        return (value, node) if value is not None else None
    name = method_name(node)
    if name in _KEEP and not qual:
        return _pad_value(ctx, node.func.value, scope, line, depth + 1)  # type: ignore[attr-defined]
    return None


def _getitem(ctx: FileContext, dataset: ast.expr | None) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """``__getitem__`` of the local Dataset class a loader reads (its samples are stacked as they come)."""
    built = value_of(ctx, dataset)
    name = key_of(built.func) if isinstance(built, ast.Call) else None
    return ctx.methods.get(name or "", {}).get("__getitem__") if name in ctx.classes else None


def _from_loader(ctx: FileContext, loop: ast.For | ast.AsyncFor, name: str, key: str | None, depth: int) -> tuple[int, ast.Call] | None:
    """What a loop variable holds when the loop reads a DataLoader whose collate_fn is a local function (or
    whose local Dataset pads in ``__getitem__``)."""
    iterable, target = loop.iter, loop.target
    if isinstance(iterable, ast.Call) and key_of(iterable.func) == "enumerate" and iterable.args:
        iterable = iterable.args[0]
        target = target.elts[1] if isinstance(target, ast.Tuple) and len(target.elts) == 2 else None  # type: ignore[assignment]
    if isinstance(iterable, ast.Call) and key_of(iterable.func) in ("tqdm", "tqdm.tqdm") and iterable.args:
        iterable = iterable.args[0]
    loader = value_of(ctx, iterable)
    if not isinstance(loader, ast.Call) or qual_last(ctx, loader) != "DataLoader":
        return None
    collate = loader_argument(loader, "collate_fn")
    if isinstance(collate, ast.Lambda):  # collate_fn=lambda batch: (pad_sequence(...), pad_sequence(...))
        fn, result = ctx.tree, collate.body
    else:
        if collate is None:  # the default collate stacks what the dataset's __getitem__ padded
            fn = _getitem(ctx, loader_argument(loader, "dataset"))
        else:
            fn = ctx.functions.get(key_of(collate) or "")  # type: ignore[assignment]
        if fn is None:
            return None
        returns = [n.value for n in ast.walk(fn) if isinstance(n, ast.Return) and n.value is not None]
        if len(returns) != 1:
            return None
        result = returns[0]
    if key is None and isinstance(target, ast.Tuple) and isinstance(result, ast.Tuple) and len(result.elts) == len(target.elts):
        names = [key_of(e) for e in target.elts]
        part = result.elts[names.index(name)] if name in names else None
    elif key is not None and isinstance(target, ast.Name) and target.id == name and isinstance(result, ast.Dict):
        part = next((v for k, v in zip(result.keys, result.values) if isinstance(k, ast.Constant) and k.value == key), None)
    else:
        part = None
    return _pad_value(ctx, part, fn, getattr(result, "lineno", 10**9), depth + 1) if part is not None else None
