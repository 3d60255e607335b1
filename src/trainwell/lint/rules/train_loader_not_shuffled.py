"""TW401: the DataLoader that feeds training steps does not shuffle."""

from __future__ import annotations

import ast
from typing import Iterator

from trainwell.lint import events as ev
from trainwell.lint.context import FileContext, has_star_kwargs, key_of, kwarg
from trainwell.lint.dataflow import reaching
from trainwell.lint.events import unwrap_iter
from trainwell.lint.rules import TRAINING
from trainwell.lint.rules._data import spread_keys
from trainwell.lint.syntax import walk
from trainwell.diagnostic import Finding

CODE = "TW401"
REQUIRES = TRAINING
_POSITIONAL = ("dataset", "batch_size", "shuffle", "sampler", "batch_sampler")


def check(ctx: FileContext) -> Iterator[Finding]:
    reported: set[int] = set()
    for frame in ctx.analysis.frames:
        if frame.kind != "loop" or frame.iter_key is None or not any(_steps_here(ctx, b.frame, frame) for b in frame.of(ev.BACKWARD)):
            continue
        if not _repeated(frame):
            continue  # one pass over the loader: order cannot repeat between epochs
        for call in _fed_loaders(ctx, frame):
            if id(call) in reported or not _unshuffled(ctx, call):
                continue
            reported.add(id(call))
            yield _finding(ctx, call, frame)


def _finding(ctx: FileContext, call: ast.Call, frame) -> Finding:
    return ctx.finding(
        CODE, call,
        f"`{ctx.snippet(call)}` feeds the training loop at line {frame.node.lineno} but does not shuffle: every epoch "
        "sees the batches in the same order, which biases SGD (sorted or grouped data makes it much worse).",
        "Pass shuffle=True (or a sampler such as RandomSampler / DistributedSampler) to the training DataLoader.",
    )


def _loader_call(ctx: FileContext, key: str | None, loop: ast.AST | None = None) -> ast.Call | None:
    """The DataLoader call ``key`` holds where ``loop`` iterates it: the loop's own function's assignment that reaches
    it when that builds a loader (directly or through a local factory's return: a file whose functions each bind
    their own ``data_iter``); none when it calls a generator function of the file (its own batches); else the
    key's role in the file."""
    role = ctx.role(key) if key is not None else None
    known = role.node if role is not None and role.kind == "loader" and isinstance(role.node, ast.Call) else None
    if key is None or "." in key or loop is None or ctx.home(loop) is not ctx:
        return known
    values = reaching(ctx, ctx.scope_of(loop), key, loop.lineno)
    if len(values) != 1 or values[0] is known or not isinstance(values[0], ast.Call):
        return known
    value = values[0]
    found = ctx.classify(value)
    if found is not None and found.kind == "loader":
        return value
    fn = ctx.functions.get(key_of(value.func) or "")
    if fn is None:
        return known  # a wrapper (`fabric.setup_dataloaders(loader)`) or a library's loader: what the file knows
    if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in walk(fn)):
        return None  # a generator of the file makes these batches
    returns = [n.value for n in walk(fn) if isinstance(n, ast.Return) and n.value is not None]
    if len(returns) == 1 and isinstance(returns[0], ast.Name):
        made = reaching(ctx, fn, returns[0].id, returns[0].lineno)
        built = ctx.classify(made[0]) if len(made) == 1 and isinstance(made[0], ast.Call) else None
        if built is not None and built.kind == "loader":
            return made[0]  # type: ignore[return-value]
    return known


def _fed_loaders(ctx: FileContext, frame) -> list[ast.Call]:
    """The DataLoader calls whose batches the loop takes: the one it iterates; in ``zip(a, b)`` also each
    other loader, but only when one of the zipped loaders shuffles (then the pairs are not aligned on purpose,
    and an unshuffled partner repeats its order every epoch)."""
    first = _loader_call(ctx, frame.iter_key, frame.node if frame.iter_key == key_of(unwrap_iter(frame.node.iter)) else None)
    found = [first] if first is not None else []
    iterable = frame.node.iter
    while isinstance(iterable, ast.Call) and (key_of(iterable.func) or "").rsplit(".", 1)[-1] in ("enumerate", "tqdm", "iter") and iterable.args:
        iterable = iterable.args[0]
    if isinstance(iterable, ast.Call) and key_of(iterable.func) == "zip" and len(iterable.args) > 1:
        zipped = [_loader_call(ctx, key_of(a)) for a in iterable.args]
        if all(c is not None for c in zipped) and any(_shuffles(ctx, c) for c in zipped):  # type: ignore[arg-type]
            found += [c for c in zipped[1:] if c is not None and c is not first]
    return found


def _shuffles(ctx: FileContext, call: ast.Call) -> bool:
    shuffle = _argument(call, "shuffle")
    samplers = [_argument(call, name) for name in ("sampler", "batch_sampler")]
    return (isinstance(shuffle, ast.Constant) and shuffle.value is True) or any(
        s is not None and not (isinstance(s, ast.Constant) and s.value is None) for s in samplers)


def _steps_here(ctx: FileContext, inner, frame) -> bool:
    """Whether a backward in loop ``inner`` is a step of ``frame``'s batch: ``inner`` is ``frame``, or loops
    nested in it over a list of models and optimizers or a ``range`` (one step per model on the same batch)."""
    while inner is not None and inner is not frame:
        if inner.kind != "loop" or not _over_a_list(ctx, inner.node):
            return False
        inner = inner.parent
    return inner is frame


def _over_a_list(ctx: FileContext, node: ast.AST) -> bool:
    if not isinstance(node, (ast.For, ast.AsyncFor)):
        return False
    iterable = node.iter
    while isinstance(iterable, ast.Call) and key_of(iterable.func) in ("enumerate", "zip") and iterable.args:
        if key_of(iterable.func) == "zip":
            return all(_a_list(ctx, a) for a in iterable.args)
        iterable = iterable.args[0]
    return _a_list(ctx, iterable)


def _a_list(ctx: FileContext, node: ast.expr) -> bool:
    """A list or tuple written here (``nets = [a, b]``, ``[make(n) for n in nets]``), or ``range(...)``."""
    key = key_of(node)
    if key is not None:
        role = ctx.role(key)
        if role is not None and role.kind == "loader":
            return False
        values = [a.value for a in ctx.assigns if len(a.targets) == 1 and key_of(a.targets[0]) == key]
        return bool(values) and all(isinstance(v, (ast.List, ast.Tuple, ast.ListComp)) for v in values)
    if isinstance(node, ast.Call):
        return key_of(node.func) == "range"
    return isinstance(node, (ast.List, ast.Tuple, ast.ListComp))


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
    if value is None and len(call.args) > index and not any(isinstance(a, ast.Starred) for a in call.args[: index + 1]):
        value = call.args[index]
    return value


def _unshuffled(ctx: FileContext, call: ast.Call) -> bool:
    if has_star_kwargs(call):
        spread = spread_keys(ctx, call)
        if spread is None or spread & {"dataset", "shuffle", "sampler", "batch_sampler"}:
            return False  # what the spread gives is unknown, or it may shuffle
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
