"""TW402: normalisation statistics or a fitted preprocessor computed on the full dataset before the split."""

from __future__ import annotations

import ast
import bisect
import re
from typing import Iterator

from trainwell.lint.context import FileContext, key_of, method_name, walk
from trainwell.lint.dataflow import scope_nodes
from trainwell.diagnostic import Finding

CODE = "TW402"
_STATS = {"mean", "std", "var", "min", "max", "amin", "amax", "nanmean", "nanstd"}
_FITS = {"fit", "fit_transform"}
_SPLITS = {"train_test_split", "random_split", "KFold", "StratifiedKFold"}
_SPLIT_WORDS = ("train", "val", "test", "valid", "holdout")


def check(ctx: FileContext) -> Iterator[Finding]:
    if not any(w in ctx.source for w in ("split", "train", "KFold")) or not any(w in ctx.source for w in (".fit", "mean(", "std(", "var(", "max(")):
        return
    # A module's methods run inside forward passes: their reductions and slices are the model's maths, not data prep.
    scopes = [ctx.tree, *ctx.functions.values(), *(m for cls, ms in ctx.methods.items() if not ctx.is_module_class(cls) for m in ms.values())]
    # a statement that computes a statistic says its name, or the name it was imported as (`from numpy import mean as avg`)
    aliases = [name for name, full in ctx.imports.items() if full.rsplit(".", 1)[-1] in _STATS]
    words = re.compile("|".join(sorted(_STATS | _FITS) + [re.escape(a) for a in aliases]))
    for scope in scopes:
        nodes = scope_nodes(ctx, scope)
        statements = sorted(ctx.members_of(scope, ast.Assign, ast.Expr, ast.AugAssign), key=lambda n: n.lineno)
        for stmt in statements:
            if not words.search("\n".join(ctx.lines[stmt.lineno - 1:stmt.end_lineno])):
                continue  # names no statistic and no fit: nothing to walk
            data = _statistic_of(ctx, stmt)
            if data is None or any(w in data.lower() for w in _SPLIT_WORDS):
                continue
            split = _split_after(ctx, nodes, data, stmt.end_lineno or stmt.lineno)
            if split is None:
                continue
            yield ctx.finding(
                CODE, stmt,
                f"`{ctx.snippet(stmt)}` computes statistics over all of `{data}`, which is split later (line {split.lineno}): "
                "validation rows leak into the training preprocessing and the validation score is optimistic.",
                "Split first, then compute the statistics (or fit the scaler) on the training split only and apply them to both.",
            )


def _statistic_of(ctx: FileContext, stmt: ast.stmt) -> str | None:
    """The data key whose statistics ``stmt`` computes (``X.mean(0)``, ``np.std(X)``, ``scaler.fit(X)``), else None."""
    for call in (n for n in walk(stmt) if isinstance(n, ast.Call)):
        name = method_name(call)
        qual = ctx.call_name(call) or ""
        if name in _FITS and call.args and (qual.startswith("sklearn") or _sklearn_object(ctx, call.func.value)):  # type: ignore[attr-defined]
            return key_of(call.args[0])
        if name in _FITS and call.args and isinstance(call.func.value, ast.Name) and _sklearn_object(ctx, call.func.value):  # type: ignore[attr-defined]
            return key_of(call.args[0])
        if name in _STATS and not qual and key_of(call.func.value):  # type: ignore[attr-defined]
            return key_of(call.func.value)  # type: ignore[attr-defined]
        if qual.rsplit(".", 1)[-1] in _STATS and qual.split(".")[0] in ("numpy", "torch") and call.args:
            return key_of(call.args[0])
    return None


def _sklearn_object(ctx: FileContext, node: ast.AST) -> bool:
    if isinstance(node, ast.Call):
        return (ctx.call_name(node) or "").startswith("sklearn")
    key = key_of(node)
    return any(isinstance(a.value, ast.Call) and (ctx.call_name(a.value) or "").startswith("sklearn")
               and any(key_of(t) == key for t in a.targets) for a in ctx.assigns)


def _split_targets(nodes: list[ast.AST]) -> set[int]:
    """ids of the subscripts assigned to names that say train/val/test (``X_train, X_val = X[:n], X[n:]``)."""
    found: set[int] = set()
    for node in nodes:
        if isinstance(node, ast.Assign) and any(w in text for text in (ast.unparse(t).lower() for t in node.targets) for w in _SPLIT_WORDS):
            found.update(id(n) for n in walk(node.value) if isinstance(n, ast.Subscript))
    return found


_READ = frozenset({ast.Assign, ast.Call, ast.Subscript})  # the nodes a split is made of: the walk below reads no other


def _split_after(ctx: FileContext, nodes: list[ast.AST], data: str, line: int) -> ast.AST | None:
    """The first statement after ``line`` that splits ``data`` (or a dataset built from it) into train/validation parts."""
    derived = {data}
    cache = ctx.__dict__.setdefault("_tw402_scopes", {})  # asked per statistic: the scope's split targets and order, once
    if id(nodes) not in cache:
        ordered = sorted((n for n in nodes if n.__class__ in _READ and n.lineno > 0), key=lambda n: (n.lineno, n.col_offset))  # type: ignore[attr-defined]
        cache[id(nodes)] = (_split_targets(nodes), ordered, [n.lineno for n in ordered])  # type: ignore[attr-defined]
    named, ordered, lines = cache[id(nodes)]
    for node in ordered[bisect.bisect_right(lines, line):]:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and any(key_of(a) in derived for a in node.value.args):
            derived |= {key_of(t) for t in node.targets if key_of(t)}  # TensorDataset(X, Y) -> full
        if isinstance(node, ast.Call):
            name = (ctx.call_name(node) or key_of(node.func) or "").rsplit(".", 1)[-1]
            if name in _SPLITS and any(key_of(a) in derived for a in node.args):
                return node
        if isinstance(node, ast.Subscript) and key_of(node.value) in derived:
            # a slice or an index is a split only when it says so: `X_train = X[:800]`, `X[val_idx]`
            index = node.slice
            if isinstance(index, ast.Slice) and (index.lower is not None or index.upper is not None) and id(node) in named:
                return node
            if isinstance(index, (ast.Name, ast.Subscript)) and (id(node) in named or any(w in text for text in [ast.unparse(index).lower()] for w in _SPLIT_WORDS)):
                return node
    return None
