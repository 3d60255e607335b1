"""TW111: a DistributedDataParallel model trained on a loader that every rank reads whole.

Premises, each read from the file: the model of the training loop is wrapped
in ``DistributedDataParallel``; the loader that feeds that loop has no sampler
and no batch sampler; its dataset is map-style (TensorDataset, a torchvision
dataset, or a local ``Dataset`` subclass) and nothing on the way splits it by
rank. A file that pins the world size to 1 is silent.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from trainwell.diagnostic import Finding
from trainwell.lint import events as ev
from trainwell.lint.context import (
    FileContext,
    has_star_kwargs,
    key_of,
    kwarg,
    strip_identity,
)
from trainwell.lint.rules._data import (
    assigned,
    loader_argument,
    loader_calls,
    loops_over,
    mentions,
    qual_last,
    spread_keys,
    trains,
    value_of,
)

CODE = "TW111"
_DDP = {"DistributedDataParallel"}
_SHARD_WORDS = ("rank", "shard", "node", "world", "split", "worker", "local_", "partition")
_RANK_WORDS = tuple(w for w in _SHARD_WORDS if w != "split")


def check(ctx: FileContext) -> Iterator[Finding]:
    if "DistributedDataParallel" not in ctx.source or _world_size_one(ctx):
        return
    wrapped = _ddp_models(ctx)
    if not wrapped:
        return
    for key, call in _loaders(ctx):
        if any(loader_argument(call, name) is not None for name in ("sampler", "batch_sampler")):
            continue
        dataset = loader_argument(call, "dataset")
        if dataset is None or not _whole_map_dataset(ctx, dataset, set()):
            continue
        for frame in loops_over(ctx, key):
            forwards = [e.key for e in frame.of(ev.FORWARD)]
            # the DDP model runs in this loop; or no model the roles know does, and the file wraps one model only
            model = next((k for k in forwards if k in wrapped), None) or (next(iter(wrapped)) if not forwards and len(wrapped) == 1 else None)
            if not trains(frame) or model is None:
                continue
            yield ctx.finding(
                CODE, call,
                f"`{ctx.snippet(call)}` feeds `{model}`, a DistributedDataParallel model (training loop at line "
                f"{frame.node.lineno}), without a DistributedSampler or a split by rank: every rank reads the whole "
                "dataset, so the ranks train on the same samples, an epoch is world_size times the data, and DDP "
                "averages identical gradients.",
                "Pass sampler=DistributedSampler(dataset) (and call sampler.set_epoch(epoch) each epoch), or give each "
                "rank its own shard of the data.",
            )
            break


def _loaders(ctx: FileContext) -> list[tuple[str, ast.Call]]:
    """The loaders built here, and those built with a ``**kwargs`` spread whose keys the file spells out and that
    holds no dataset, sampler or batch sampler (``kwargs = dict(batch_size=..., num_workers=...)``)."""
    found = list(loader_calls(ctx))
    known = {key for key, _ in found}
    for key, role in ctx.roles.items():
        if role.kind != "loader" or key in known or not isinstance(role.node, ast.Call) or not has_star_kwargs(role.node):
            continue
        spread = spread_keys(ctx, role.node)
        if spread is not None and not spread & {"dataset", "sampler", "batch_sampler"}:
            found.append((key, role.node))
    return found


def _ddp_models(ctx: FileContext) -> set[str]:
    """Keys assigned a DistributedDataParallel(...) wrapper."""
    found = set()
    for node in ctx.assigns:
        value = strip_identity(node.value)
        if isinstance(value, ast.Call) and qual_last(ctx, value) in _DDP:
            found.update(k for k in (key_of(t) for t in node.targets) if k is not None)
    return found


def _argument_of(ctx: FileContext, name: str) -> ast.expr | None:
    """The argument a parameter ``name`` receives, when one local function has it and is called once."""
    owners = [fn for fn in ctx.functions.values() if name in [a.arg for a in fn.args.posonlyargs + fn.args.args]]
    if len(owners) != 1:
        return None
    fn = owners[0]
    calls = [c for c in ctx.calls if key_of(c.func) == fn.name]
    if len(calls) != 1 or any(isinstance(a, ast.Starred) for a in calls[0].args):
        return None
    index = [a.arg for a in fn.args.posonlyargs + fn.args.args].index(name)
    return calls[0].args[index] if index < len(calls[0].args) else kwarg(calls[0], name)


def _unpacked_split(ctx: FileContext, key: str) -> ast.expr | None:
    """The ``random_split(...)`` call that ``train_set, val_set = random_split(...)`` unpacks into ``key``."""
    for node in ctx.assigns:
        for target in node.targets:
            if isinstance(target, (ast.Tuple, ast.List)) and key in (key_of(e) for e in target.elts) \
                    and isinstance(node.value, ast.Call) and qual_last(ctx, node.value) == "random_split":
                return node.value
    return None


def _world_size_one(ctx: FileContext) -> bool:
    for call in ctx.calls:
        size = kwarg(call, "world_size")
        if size is not None and isinstance(size, ast.Constant) and size.value == 1:
            return True
    return False


def _whole_map_dataset(ctx: FileContext, node: ast.expr, seen: set[str]) -> bool:
    """Whether ``node`` is a map-style dataset that nothing splits by rank (False when unknown)."""
    node = strip_identity(node)
    key = key_of(node)
    if key is not None:
        if key in seen or mentions(node, _SHARD_WORDS):
            return False
        split = _unpacked_split(ctx, key)
        values = [split] if split is not None else assigned(ctx, key)
        if not values:
            return _whole_map_dataset(ctx, _argument_of(ctx, key), seen | {key})
        return all(_whole_map_dataset(ctx, v, seen | {key}) for v in values)  # every branch (`FakeData` or `ImageFolder`)
    if isinstance(node, ast.Call) and key_of(node.func) in ctx.functions:
        returned = value_of(ctx, node)  # a local factory: what it returns
        return returned is not node and returned is not None and _whole_map_dataset(ctx, returned, seen)
    if isinstance(node, ast.Call) and qual_last(ctx, node) == "random_split" and node.args:
        # a random split into train/val is not a split by rank, unless its sizes are read from the ranks
        return not any(mentions(a, _RANK_WORDS) for a in [*node.args[1:], *(k.value for k in node.keywords)]) \
            and _whole_map_dataset(ctx, node.args[0], seen)
    if not isinstance(node, ast.Call) or mentions(node, _SHARD_WORDS):
        return False
    qual = ctx.call_name(node) or ""
    if qual.startswith("torchvision.datasets.") or qual_last(ctx, node) == "TensorDataset":
        return True
    local = key_of(node.func)
    if local in ctx.classes:
        return _map_style(ctx, local) and not mentions(ctx.classes[local], _SHARD_WORDS)
    found = ctx.project.class_def(ctx, node.func) if ctx.project is not None else None
    if found is not None:  # `MultiCropDataset(...)` of another file of the project
        home, cls = found
        return _map_style(home, cls.name) and not mentions(cls, _SHARD_WORDS)
    return False


def _map_style(ctx: FileContext, name: str, seen: frozenset[str] = frozenset()) -> bool:
    """Whether class ``name`` of ``ctx`` is a map-style dataset: a ``Dataset`` subclass that is no
    ``IterableDataset``, or a subclass of a torchvision dataset (``datasets.ImageFolder``)."""
    cls = ctx.classes.get(name)
    if cls is None or name in seen or ctx.derives_from(name, "IterableDataset"):
        return False
    for base in cls.bases:
        qual = ctx.qualname(base) or key_of(base) or ""
        if qual.endswith("Dataset") or qual.startswith("torchvision.datasets.") \
                or (key_of(base) in ctx.classes and _map_style(ctx, key_of(base), seen | {name})):  # type: ignore[arg-type]
            return True
    return False
