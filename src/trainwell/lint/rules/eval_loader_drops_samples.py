"""TW306: a validation or test DataLoader with ``drop_last=True``: every evaluation skips the last partial batch.

Premises, each read from the file: a ``DataLoader(...)`` built here passes
``drop_last=True`` (directly, in a ``**kwargs`` dict the file spells out, or
through a ``functools.partial(DataLoader, ...)`` factory); nothing trains on it;
every loop over it (after inlining helpers) runs forward passes that are
evaluations (autograd off, or the model in eval mode) and measures something (a
loss, a value read back, a running sum), or a one-line ``sum(... for x, y in
loader)`` under no_grad calls the model; bare forwards in train mode under
no_grad are a BatchNorm re-estimation pass, where dropping a ragged batch is
deliberate; and the dataset's length is not known to be a multiple of the
batch size.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from trainwell.diagnostic import Finding
from trainwell.lint import events as ev
from trainwell.lint.context import FileContext, key_of
from trainwell.lint.dataflow import no_grad_nodes
from trainwell.lint.rules._data import dataset_length, loops_over, qual_last, single_value, trains, value_of
from trainwell.lint.syntax import walk

CODE = "TW306"


def check(ctx: FileContext) -> Iterator[Finding]:
    if "drop_last" not in ctx.source:
        return
    reported: set[int] = set()
    for key, call, given in _loaders(ctx):
        drop = single_value(ctx, given.get("drop_last"))
        if not (isinstance(drop, ast.Constant) and drop.value is True) or id(call) in reported:
            continue
        loops = loops_over(ctx, key)
        if any(trains(f) for f in loops) or not (loops or _evaluated_in_expression(ctx, key)):
            continue
        if not all(_evaluates(f) or _measures_beside_training(ctx, f, key) for f in loops):
            continue
        dataset = given.get("dataset", call.args[0] if call.args and not isinstance(call.args[0], ast.Starred) else None)
        size = dataset_length(ctx, dataset)
        batch = single_value(ctx, given.get("batch_size"))
        batch_size = batch.value if isinstance(batch, ast.Constant) and type(batch.value) is int else None
        if size is not None and batch_size and size % batch_size == 0:
            continue
        reported.add(id(call))
        dropped = (f"{size % batch_size} of its {size} samples" if size is not None and batch_size
                   else "up to batch_size - 1 samples")
        where = f"loop at line {loops[0].node.lineno}" if loops else "a one-line evaluation"
        yield ctx.finding(
            CODE, call,
            f"`{ctx.snippet(call)}` passes drop_last=True but only feeds evaluation ({where}): "
            f"every evaluation silently skips {dropped}, so the metric is computed on a subset and the best "
            "checkpoint is picked on it.",
            "Remove drop_last=True from the evaluation loader (keep it on the training loader if you need it).",
        )


def _loaders(ctx: FileContext) -> list[tuple[str, ast.Call, dict[str, ast.expr]]]:
    """(key, the call that builds it, its keyword arguments) for each key assigned a DataLoader: built directly,
    through a local helper's return, with ``**kwargs`` dicts the file spells out, or through a
    ``functools.partial(DataLoader, ...)`` factory."""
    found = []
    seen: set[str] = set()
    for node in ctx.assigns:
        if len(node.targets) != 1 or key_of(node.targets[0]) is None or key_of(node.targets[0]) in seen:
            continue
        key = key_of(node.targets[0])
        value = value_of(ctx, node.targets[0])
        if not isinstance(value, ast.Call):
            continue
        given: dict[str, ast.expr] | None
        if qual_last(ctx, value) == "DataLoader":
            given = _keywords(ctx, value)
        else:
            factory = single_value(ctx, value.func) if key_of(value.func) is not None else None
            if not (isinstance(factory, ast.Call) and _is_partial_loader(ctx, factory)):
                continue
            before, after = _keywords(ctx, factory), _keywords(ctx, value)
            given = None if before is None or after is None else {**before, **after}
            if given is not None and value.args and "dataset" not in given:
                given["dataset"] = value.args[0]
        if given is not None:
            seen.add(key)  # type: ignore[arg-type]
            found.append((key, value, given))  # type: ignore[arg-type]
    return found


def _keywords(ctx: FileContext, call: ast.Call) -> dict[str, ast.expr] | None:
    """The keyword arguments of ``call``, ``**d`` expanded where ``d`` is a dict the file spells out (a literal or
    ``dict(...)``, assigned once); None when a ``**`` cannot be read and no explicit ``drop_last`` is given."""
    given: dict[str, ast.expr] = {}
    unreadable = False
    for kw in call.keywords:
        if kw.arg is not None:
            given[kw.arg] = kw.value
            continue
        spread = single_value(ctx, kw.value)
        if isinstance(spread, ast.Dict) and all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in spread.keys):
            given.update({k.value: v for k, v in zip(spread.keys, spread.values)})  # type: ignore[union-attr]
        elif isinstance(spread, ast.Call) and key_of(spread.func) == "dict" and not spread.args:
            given.update({k.arg: k.value for k in spread.keywords if k.arg is not None})
            unreadable |= any(k.arg is None for k in spread.keywords)
        else:
            unreadable = True
    if unreadable and "drop_last" not in given:
        return None
    return given


def _is_partial_loader(ctx: FileContext, call: ast.Call) -> bool:
    return (ctx.call_name(call) or "") == "functools.partial" and bool(call.args) and \
        (ctx.qualname(call.args[0]) or "").rsplit(".", 1)[-1] == "DataLoader"


def _evaluated_in_expression(ctx: FileContext, loader: str) -> bool:
    """``sum(... model(x) ... for x, y in loader)`` under no_grad: a one-line evaluation pass."""
    quiet = no_grad_nodes(ctx)
    for node in ctx.nodes:
        if not isinstance(node, (ast.GeneratorExp, ast.ListComp)) or id(node) not in quiet:
            continue
        source = node.generators[0].iter
        while isinstance(source, ast.Call) and key_of(source.func) in ("enumerate", "tqdm") and source.args:
            source = source.args[0]
        if key_of(source) == loader and any(
                isinstance(c, ast.Call) and ctx.is_model(key_of(c.func)) for c in walk(node.elt)):
            return True
    return False


def _evaluates(frame: ev.Frame) -> bool:
    """Every forward of the loop has autograd off or the model in eval mode, and the loop measures something
    (a loss, a value read back, a running sum or list); a pass of bare forwards in train mode is a calibration."""
    forwards = frame.of(ev.FORWARD)
    if not forwards or not all(f.grad is False or _in_eval(f.mode) for f in forwards):
        return False
    measures = any(frame.has(kind) for kind in (ev.LOSS, ev.SYNC, ev.APPEND, ev.AUG))
    return measures or all(_in_eval(f.mode) for f in forwards)


def _measures_beside_training(ctx: FileContext, frame: ev.Frame, loader: str) -> bool:
    """A test loop written without ``eval()`` or ``no_grad``: its forwards have autograd on, but nothing is
    backpropagated in it, it measures something (a loss, a value read back, a running sum or list), and the file
    trains in another loop over another loader, so this one is not a training pass whose backward is hidden."""
    forwards = frame.of(ev.FORWARD)
    if not forwards or frame.has(ev.BACKWARD) or frame.has(ev.STEP) or any(f.grad not in (True, False) for f in forwards):
        return False  # `torch.enable_grad()`: gradients on purpose
    bodies = [frame.node, *{id(e.scope): e.scope for e in frame.events if e.scope is not None
                            and not isinstance(e.scope, ast.Module)}.values()]
    if any(isinstance(n, ast.Call) and (ctx.call_name(n) or "").endswith("autograd.grad")
           for body in bodies for n in walk(body)):
        return False  # gradients taken by hand: a training or an attack pass, not a plain measurement
    if not any(frame.has(kind) for kind in (ev.LOSS, ev.SYNC, ev.APPEND, ev.AUG)):
        return False
    return any(trains(other) and other.iter_key is not None and not ctx.analysis.same(other.iter_key, loader)
               and not _nested(frame, other) and not _nested(other, frame)
               for other in ctx.analysis.frames if other.kind == "loop")


def _nested(inner: ev.Frame, outer: ev.Frame) -> bool:
    """Whether ``outer`` is ``inner`` or a loop around it (an epoch loop trains through everything it holds)."""
    current: ev.Frame | None = inner
    while current is not None:
        if current is outer or current.node is outer.node:
            return True
        current = current.parent
    return False


def _in_eval(mode: frozenset) -> bool:
    """The model is in eval mode on every path: the loop model records each ``eval()`` as ``("eval", call)``."""
    return bool(mode) and all(m == "eval" or (isinstance(m, tuple) and m[0] == "eval") for m in mode)
