"""TW401: the DataLoader that feeds training steps does not shuffle."""

from __future__ import annotations

import ast
from typing import Iterator

from trainwell.lint import events as ev
from trainwell.lint.context import FileContext, has_star_kwargs, key_of, kwarg
from trainwell.lint.rules import TRAINING
from trainwell.diagnostic import Finding

CODE = "TW401"
REQUIRES = TRAINING
_POSITIONAL = ("dataset", "batch_size", "shuffle", "sampler", "batch_sampler")


def check(ctx: FileContext) -> Iterator[Finding]:
    reported: set[int] = set()
    for frame in ctx.analysis.frames:
        if frame.kind != "loop" or frame.iter_key is None or not any(b.frame is frame for b in frame.of(ev.BACKWARD)):
            continue
        if not _repeated(frame):
            continue  # one pass over the loader: order cannot repeat between epochs
        role = ctx.role(frame.iter_key)
        if role is None or role.kind != "loader" or not isinstance(role.node, ast.Call) or id(role.node) in reported:
            continue
        call = role.node
        if has_star_kwargs(call) or not _unshuffled(ctx, call):
            continue
        reported.add(id(call))
        yield ctx.finding(
            CODE, call,
            f"`{ctx.snippet(call)}` feeds the training loop at line {frame.node.lineno} but does not shuffle: every epoch "
            "sees the batches in the same order, which biases SGD (sorted or grouped data makes it much worse).",
            "Pass shuffle=True (or a sampler such as RandomSampler / DistributedSampler) to the training DataLoader.",
        )


def _repeated(frame) -> bool:
    """Whether the loop over the loader runs inside an epoch loop (directly or through a helper): a ``while``, or a
    ``for`` over ``range(...)`` or over something named for epochs. A loop over a list of settings is not one."""
    parent = frame.parent
    while parent is not None:
        if parent.kind == "loop" and _epoch_loop(parent.node):
            return True
        parent = parent.parent
    return False


def _epoch_loop(node: ast.AST) -> bool:
    if isinstance(node, ast.While):
        return True
    if not isinstance(node, (ast.For, ast.AsyncFor)):
        return False
    iterable = node.iter
    while isinstance(iterable, ast.Call) and (key_of(iterable.func) or "").rsplit(".", 1)[-1] in ("tqdm", "enumerate", "trange", "range", "count"):
        if (key_of(iterable.func) or "").rsplit(".", 1)[-1] in ("range", "trange", "count"):
            return True
        if not iterable.args:
            return False
        iterable = iterable.args[0]
    text = ast.unparse(node.target) + " " + ast.unparse(iterable)
    return "epoch" in text.lower()


def _argument(call: ast.Call, name: str) -> ast.expr | None:
    value = kwarg(call, name)
    index = _POSITIONAL.index(name)
    if value is None and len(call.args) > index:
        value = call.args[index]
    return value


def _unshuffled(ctx: FileContext, call: ast.Call) -> bool:
    for name in ("sampler", "batch_sampler"):
        value = _argument(call, name)
        if value is not None and not (isinstance(value, ast.Constant) and value.value is None):
            return False
    shuffle = _argument(call, "shuffle")
    if shuffle is not None and not (isinstance(shuffle, ast.Constant) and shuffle.value in (False, None)):
        return False  # shuffle=True, or an expression we cannot decide
    return not _iterable(ctx, _argument(call, "dataset")) and not _one_batch(ctx, call)


def _one_batch(ctx: FileContext, call: ast.Call) -> bool:
    """``DataLoader(Subset(ds, range(5)), batch_size=5)``: a known size that fits one batch has no order to repeat."""
    size, dataset = _argument(call, "batch_size"), _argument(call, "dataset")
    if isinstance(dataset, ast.Name):  # `subset = Subset(...)`, assigned once
        values = [a.value for a in ctx.assigns if len(a.targets) == 1 and key_of(a.targets[0]) == dataset.id]
        dataset = values[0] if len(values) == 1 else None
    if not (isinstance(size, ast.Constant) and isinstance(size.value, int)) or not isinstance(dataset, ast.Call):
        return False
    picked = dataset.args[-1] if dataset.args else None
    if isinstance(picked, ast.Call) and key_of(picked.func) == "range" and len(picked.args) == 1:
        count = picked.args[0]
        return isinstance(count, ast.Constant) and isinstance(count.value, int) and count.value <= size.value
    return False


def _iterable(ctx: FileContext, dataset: ast.expr | None) -> bool:
    """Whether the dataset is (or may be) an IterableDataset stream, where shuffle= does not apply."""
    if dataset is None:
        return True
    if isinstance(dataset, ast.Name):
        for node in ctx.nodes:
            if isinstance(node, ast.Assign) and any(key_of(t) == dataset.id for t in node.targets):
                if _iterable(ctx, node.value):
                    return True
        return False
    if isinstance(dataset, ast.Call):
        name = key_of(dataset.func) or ""
        qual = ctx.call_name(dataset) or ""
        if "Iterable" in qual or "Iterable" in name or "stream" in ast.unparse(dataset).lower():
            return True
        return name in ctx.classes and ctx.derives_from(name, "IterableDataset")
    return False
