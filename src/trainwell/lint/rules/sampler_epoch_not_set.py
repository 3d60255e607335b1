"""TW110: a shuffling DistributedSampler drives several epochs and nothing calls its set_epoch().

DistributedSampler seeds its permutation with ``seed + epoch``; ``epoch`` only
changes through ``set_epoch``. Without it every epoch reads the same order.
Reported only when the sampler is built here with shuffling on, its loader
feeds a training loop inside a loop that repeats, and the file never says
``set_epoch`` nor hands the sampler to code we cannot see.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from trainwell.diagnostic import Finding
from trainwell.lint.context import FileContext, has_star_kwargs, key_of, kwarg
from trainwell.lint.rules._data import (
    argument,
    assigned,
    epoch_loop,
    loader_argument,
    loader_calls,
    loops_over,
    qual_last,
    single_value,
    trains,
)
from trainwell.lint.syntax import walk

CODE = "TW110"
_SAMPLER_ARGS = ("dataset", "num_replicas", "rank", "shuffle", "seed", "drop_last")


def check(ctx: FileContext) -> Iterator[Finding]:
    if "DistributedSampler" not in ctx.source or any(isinstance(n, ast.Attribute) and n.attr == "set_epoch" for n in ctx.nodes):
        return
    for key, call in _loaders(ctx):
        sampler_node = loader_argument(call, "sampler")
        sampler = _shuffling_sampler(ctx, sampler_node)
        if sampler is None or _escapes(ctx, sampler_node, key):
            continue
        for frame in loops_over(ctx, key):
            epochs = epoch_loop(frame)
            if not trains(frame) or epochs is None or _inside(sampler, epochs.node) or _inside(call, epochs.node):
                continue
            name = key_of(sampler_node) or f"{key}.sampler"
            yield ctx.finding(
                CODE, frame.node,
                f"`{key}` reads through `{name}`, a DistributedSampler that shuffles, and the loop at line "
                f"{epochs.node.lineno} repeats it epoch after epoch, but nothing calls `{name}.set_epoch(epoch)`: the "
                "sampler seeds its shuffle with seed + epoch, so every epoch sees the same order.",
                f"Call `{name}.set_epoch(epoch)` at the top of each epoch, before iterating `{key}`.",
            )
            break


def _loaders(ctx: FileContext) -> list[tuple[str, ast.Call]]:
    """The loaders built here, and those built with a ``**kwargs`` spread next to an explicit ``sampler=``: the
    spread cannot hold another sampler, ``shuffle=True`` or a batch sampler (DataLoader raises on those)."""
    found = list(loader_calls(ctx))
    known = {key for key, _ in found}
    for node in ctx.assigns:
        if len(node.targets) != 1 or (key := key_of(node.targets[0])) is None or key in known:
            continue
        value = node.value
        if (isinstance(value, ast.Call) and qual_last(ctx, value) == "DataLoader" and has_star_kwargs(value)
                and kwarg(value, "sampler") is not None and len(assigned(ctx, key)) == 1):
            found.append((key, value))
            known.add(key)
    return found


def _shuffling_sampler(ctx: FileContext, node: ast.expr | None) -> ast.Call | None:
    """The DistributedSampler(...) call ``node`` holds when it shuffles (the default), else None. A key assigned
    the sampler in one branch and ``None`` in the other (``if args.distributed: ... else: sampler = None``) holds
    the sampler whenever the run is distributed."""
    value = single_value(ctx, node)
    if value is None and node is not None and key_of(node) is not None:
        values = [v for v in assigned(ctx, key_of(node))  # type: ignore[arg-type]
                  if not (isinstance(v, ast.Constant) and v.value is None and hasattr(v, "lineno"))]
        value = values[0] if len(values) == 1 and len(values) < len(assigned(ctx, key_of(node))) else None  # type: ignore[arg-type]
    if isinstance(value, ast.IfExp):  # `DistributedSampler(ds) if distributed else None`
        branches = [b for b in (value.body, value.orelse) if not (isinstance(b, ast.Constant) and b.value is None)]
        value = branches[0] if len(branches) == 1 else None
    if not isinstance(value, ast.Call) or qual_last(ctx, value) != "DistributedSampler":
        return None
    if any(k.arg is None for k in value.keywords) or any(isinstance(a, ast.Starred) for a in value.args):
        return None
    shuffle = argument(value, "shuffle", _SAMPLER_ARGS)
    if shuffle is None or (isinstance(shuffle, ast.Constant) and shuffle.value is True):
        return value
    return None  # shuffle=False, or decided at run time


def _escapes(ctx: FileContext, sampler: ast.expr | None, loader: str) -> bool:
    """Whether the sampler (or its loader's `.sampler`) is handed to a call other than DataLoader: it may set the epoch there."""
    names = {key_of(sampler), f"{loader}.sampler"} - {None}
    for call in ctx.calls:
        if qual_last(ctx, call) == "DataLoader":
            continue
        for arg in [*call.args, *(k.value for k in call.keywords)]:
            if key_of(arg) in names:
                return True
    return False


def _inside(node: ast.AST, outer: ast.AST) -> bool:
    return any(sub is node for sub in walk(outer))
