"""TW302: an epoch metric computed as the sum of per-batch means divided by the number of batches.

The forms real code uses: ``total / len(loader)``, ``total /= len(loader)``,
``total * 1.0 / len(loader)``, ``sum(values) / len(values)``, ``np.mean(values)``,
and an averager class updated without the batch size (``meter.update(loss.item())``).
A per-batch mean is a ``.item()`` of an unweighted value, a mean-reduced loss
tensor (``total += loss``), or a count divided by the batch's own size
(``correct / len(y)``). Silent when every batch is full: ``drop_last=True``, the
default batch size of 1, or a dataset whose size (read from literals) divides by
the batch size — for a loader built in this file or returned by a helper of
another file of the project.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Iterator

from trainwell.diagnostic import Finding
from trainwell.lint.context import FileContext, key_of, kwarg, method_name, walk
from trainwell.lint.dataflow import reaching, scope_nodes
from trainwell.lint.events import loss_class

CODE = "TW302"
_MEAN_CALLS = {"numpy.mean", "numpy.average", "statistics.mean", "statistics.fmean", "torch.mean"}
_SIZE_METHODS = {"size", "numel", "__len__"}
_HINT = "Weight each batch by its size (`total += loss.item() * len(y)`) and divide by the number of samples."


def check(ctx: FileContext) -> Iterator[Finding]:
    if not any(word in ctx.source for word in ("len(", "mean(", "average(", ".update(")):
        return  # no division by a count, no mean call, no averager: nothing this rule reads
    for scope in [ctx.tree, *ctx.functions.values(), *(m for ms in ctx.methods.values() for m in ms.values())]:
        loops = ctx.members_of(scope, ast.For, ast.AsyncFor)
        if not loops:
            continue
        added = _added_to(ctx.members_of(scope, ast.AugAssign, ast.Call))
        for node in ctx.members_of(scope, ast.BinOp, ast.AugAssign, ast.Call):
            average = _average(ctx, node) if isinstance(node, (ast.BinOp, ast.AugAssign, ast.Call)) else None
            if average is None or average[0] not in added:
                continue
            acc, count = average
            loop = next((l for l in loops if l.end_lineno and l.end_lineno < node.lineno  # type: ignore[attr-defined]
                         and _accumulates_means(ctx, scope, l, acc, appended=count is None)), None)
            if loop is None or count is not None and not _counts_batches(ctx, scope, count, acc, loop):
                continue
            yield from _report(ctx, node, loop, f"`{ctx.snippet(node)}` averages per-batch means over the number of batches")
        yield from _unweighted_meters(ctx, scope, loops)


def _report(ctx: FileContext, node: ast.AST, loop: ast.For | ast.AsyncFor, what: str) -> Iterator[Finding]:
    batches = _batches(ctx, loop)
    if batches == "full":
        return
    # Proven only over a DataLoader the project builds (its last batch is smaller unless drop_last or sizes divide);
    # over an iterable of unknown kind (a list of samples, a library's iterator) it is a preview finding.
    proven = batches == "ragged" and not any(isinstance(n, ast.Break) for n in walk(loop))
    yield ctx.finding(
        CODE, node,
        f"{what}: the last, smaller batch weighs as much as a full one, so the epoch value is biased.",
        _HINT, preview=not proven,
    )


# -- the average ---------------------------------------------------------------------------------------------------
def _average(ctx: FileContext, node: ast.AST) -> tuple[str, ast.expr | None] | None:
    """(accumulator, the count it is divided by) for ``total / n`` and ``total /= n``; (list, None) for a mean
    call over a list (``np.mean(values)``, ``torch.tensor(values).mean()``)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        acc = _accumulator(node.left)
        return (acc, node.right) if acc is not None else None
    if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Div):
        acc = key_of(node.target)
        return (acc, node.value) if acc is not None else None
    if not isinstance(node, ast.Call):
        return None
    qual = ctx.call_name(node) or ""
    if qual in _MEAN_CALLS and len(node.args) == 1 and not node.keywords:
        inner = node.args[0]
    elif method_name(node) == "mean" and not node.args and not node.keywords:
        inner = node.func.value  # type: ignore[attr-defined]
    else:
        return None
    if isinstance(inner, ast.Call) and (ctx.call_name(inner) or "").rsplit(".", 1)[-1] in ("tensor", "array", "stack", "asarray") \
            and len(inner.args) == 1:
        inner = inner.args[0]  # torch.tensor(values).mean(), np.array(values).mean()
    acc = key_of(inner)
    return (acc, None) if acc is not None else None


def _added_to(nodes: list[ast.AST]) -> set[str]:
    """The keys a scope adds to (``total += ...``) or appends to (``values.append(...)``)."""
    found = set()
    for node in nodes:
        if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add):
            found.add(key_of(node.target))
        elif isinstance(node, ast.Call) and method_name(node) == "append":
            found.add(key_of(node.func.value))  # type: ignore[attr-defined]
    found.discard(None)
    return found  # type: ignore[return-value]


def _accumulator(left: ast.expr) -> str | None:
    """``total`` for ``total / n``, ``sum(values) / n``, ``total * 1.0 / n``, ``float(total) / n``, ``total.item() / n``."""
    while True:
        if isinstance(left, ast.BinOp) and isinstance(left.op, ast.Mult):
            left = left.right if _number(left.left) else left.left if _number(left.right) else left
            if isinstance(left, ast.BinOp):
                return None
        elif isinstance(left, ast.Call) and key_of(left.func) in ("float", "sum") and len(left.args) == 1:
            left = left.args[0]
        elif isinstance(left, ast.Call) and method_name(left) == "item" and not left.args:
            left = left.func.value  # type: ignore[attr-defined]
        else:
            return key_of(left)


def _number(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


# -- what the loop adds ------------------------------------------------------------------------------------------------
def _accumulates_means(ctx: FileContext, scope: ast.AST, loop: ast.For | ast.AsyncFor, acc: str, appended: bool) -> bool:
    """Whether the loop adds (or appends, when ``appended``) an unweighted per-batch mean to ``acc``."""
    for node in walk(loop):
        value = None
        if not appended and isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) and key_of(node.target) == acc:
            value = node.value
        elif isinstance(node, ast.Call) and method_name(node) == "append" and key_of(node.func.value) == acc and node.args:  # type: ignore[attr-defined]
            value = node.args[0]
        if value is not None and batch_mean(ctx, scope, loop, value, node.lineno):  # type: ignore[attr-defined]
            return True
    return False


def batch_mean(ctx: FileContext, scope: ast.AST, loop: ast.AST, value: ast.expr, line: int, depth: int = 0) -> bool:
    """Whether ``value`` is the mean over one batch of ``loop``: an unweighted ``.item()``, a mean-reduced loss (as a
    tensor too), or a sum over the batch divided by the batch's size (``correct / len(y)``)."""
    if depth > 4:
        return False
    if _weighted(value):
        return False
    if isinstance(value, ast.Name):
        inside = [v for v in reaching(ctx, scope, value.id, line) if _within(v, loop)]
        return len(inside) == 1 and isinstance(inside[0], ast.expr) and \
            batch_mean(ctx, scope, loop, inside[0], getattr(inside[0], "lineno", line), depth + 1)
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Div):
        return _batch_size(ctx, scope, loop, value.right, line)
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult):  # 100.0 * correct / len(y)
        return any(_number(side) for side in (value.left, value.right)) and \
            batch_mean(ctx, scope, loop, value.right if _number(value.left) else value.left, line, depth + 1)
    if isinstance(value, ast.Call) and key_of(value.func) == "float" and len(value.args) == 1:
        return batch_mean(ctx, scope, loop, value.args[0], line, depth + 1)
    if isinstance(value, ast.Call) and method_name(value) in ("item", "detach", "cpu", "tolist") and not value.args:
        inner = value.func.value  # type: ignore[attr-defined]
        if method_name(value) == "item":  # a number read from the batch: a mean unless it is a sum or weighted
            if isinstance(inner, ast.Name):
                inside = [v for v in reaching(ctx, scope, inner.id, line) if _within(v, loop)]
                inner = inside[0] if len(inside) == 1 and isinstance(inside[0], ast.expr) else inner
            return not _has_sum(inner) and not _weighted(inner)
        return batch_mean(ctx, scope, loop, inner, line, depth + 1)
    if isinstance(value, ast.Attribute) and value.attr == "data":
        return batch_mean(ctx, scope, loop, value.value, line, depth + 1)
    if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Attribute) and value.value.attr == "data" \
            and _number(value.slice) and value.slice.value == 0:  # type: ignore[attr-defined]
        return batch_mean(ctx, scope, loop, value.value.value, line, depth + 1)  # `loss.data[0]`: `.item()` before PyTorch 0.4
    if isinstance(value, ast.Call) and method_name(value) == "mean" and not value.args and not value.keywords:
        return _hits(value.func.value)  # type: ignore[attr-defined]
    return isinstance(value, ast.Call) and _mean_loss(ctx, value)


def _hits(node: ast.expr) -> bool:
    """Whether ``node`` is a tensor of per-sample hits (``pred.eq(y)``, ``pred == y``), through casts and moves: its
    ``.mean()`` is the batch's accuracy."""
    while isinstance(node, ast.Call) and method_name(node) in ("float", "double", "cpu", "detach", "to", "type") and isinstance(node.func, ast.Attribute):
        node = node.func.value
    return isinstance(node, ast.Compare) or isinstance(node, ast.Call) and method_name(node) == "eq"


def _weighted(value: ast.expr) -> bool:
    """A product by something other than a number (``loss.item() * x.size(0)``): a weighted value, not a mean."""
    return any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult) and not (_number(n.left) or _number(n.right))
               for n in walk(value))


def _has_sum(node: ast.AST) -> bool:
    return any(method_name(n) == "sum" or isinstance(n, ast.Constant) and n.value == "sum" for n in walk(node))


def _within(node: ast.AST, loop: ast.AST) -> bool:
    line = getattr(node, "lineno", 0)
    return loop.lineno <= line <= (loop.end_lineno or line)  # type: ignore[attr-defined]


def _mean_loss(ctx: FileContext, call: ast.Call) -> bool:
    """A call of a torch loss with the default ``reduction='mean'`` (in the call or the criterion's constructor)."""
    key = key_of(call.func)
    if loss_class(ctx, call, key) is None:
        return False
    role = ctx.role(key)
    for source in (call, role.node if role is not None else None):
        reduction = kwarg(source, "reduction") if isinstance(source, ast.Call) else None
        if reduction is not None and not (isinstance(reduction, ast.Constant) and reduction.value == "mean"):
            return False
    return True


def _batch_size(ctx: FileContext, scope: ast.AST, loop: ast.AST, node: ast.expr, line: int) -> bool:
    """``len(y)``, ``y.size(0)``, ``y.shape[0]``, ``y.numel()`` of a value of the batch (bound in the loop), or a name
    the loop binds to one of those (``total = y.size(0)``)."""
    if isinstance(node, ast.Name):
        inside = [v for v in reaching(ctx, scope, node.id, line) if _within(v, loop)]
        return len(inside) == 1 and isinstance(inside[0], ast.expr) and _batch_size(ctx, scope, loop, inside[0], line)
    batch = None
    if isinstance(node, ast.Call) and key_of(node.func) == "len" and len(node.args) == 1:
        batch = node.args[0]
    elif isinstance(node, ast.Call) and method_name(node) in _SIZE_METHODS:
        if method_name(node) == "size" and not (len(node.args) == 1 and _number(node.args[0]) and node.args[0].value == 0):  # type: ignore[attr-defined]
            return False
        batch = node.func.value  # type: ignore[attr-defined]
    elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "shape" \
            and _number(node.slice) and node.slice.value == 0:  # type: ignore[attr-defined]
        batch = node.value.value
    name = key_of(batch) if batch is not None else None
    if name is None or "." in name:
        return False
    bound = {n.id for n in walk(loop.target) if isinstance(n, ast.Name)}  # type: ignore[attr-defined]
    return name in bound or any(_within(v, loop) for v in reaching(ctx, scope, name, line))


def _counts_batches(ctx: FileContext, scope: ast.AST, right: ast.expr, acc: str, loop: ast.For | ast.AsyncFor) -> bool:
    """``len(loader)``, ``len(values)``, ``i + 1`` / a counter of iterations, or a name bound to ``len(loader)``."""
    if isinstance(right, ast.Name) and not any(_within(v, loop) for v in reaching(ctx, scope, right.id, right.lineno)):
        values = reaching(ctx, scope, right.id, right.lineno)
        if len(values) == 1 and isinstance(values[0], ast.Call) and key_of(values[0].func) == "len":
            right = values[0]  # num_batches = len(loader)
    if isinstance(right, ast.Call) and key_of(right.func) == "len" and right.args:
        counted = key_of(right.args[0])
        return counted is not None and (counted == acc or counted == key_of(_unwrap(loop.iter)))
    names = {n.id for n in walk(right) if isinstance(n, ast.Name)}
    targets = {n.id for n in walk(loop.target) if isinstance(n, ast.Name)}
    if names & targets and isinstance(loop.iter, ast.Call) and key_of(loop.iter.func) == "enumerate":
        return True
    for node in walk(loop):
        if isinstance(node, ast.AugAssign) and key_of(node.target) in names and isinstance(node.value, ast.Constant) and node.value.value == 1:
            return True
    return False


def _unwrap(node: ast.expr) -> ast.expr:
    while isinstance(node, ast.Call) and key_of(node.func) in ("enumerate", "tqdm", "tqdm.tqdm", "iter") and node.args:
        node = node.args[0]
    return node


# -- averager classes --------------------------------------------------------------------------------------------------
def _unweighted_meters(ctx: FileContext, scope: ast.AST, loops: list[ast.For | ast.AsyncFor]) -> Iterator[Finding]:
    """``meter.update(loss.item())`` in a loop over batches, where ``meter`` is built from a class of the project
    whose ``update`` adds the value and counts one per call (its weight ``n`` left at its default of 1, or absent)."""
    meters = _meters(ctx)
    if not meters:
        return
    for node in scope_nodes(ctx, scope):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and len(node.args) == 1 and not node.keywords):
            continue
        meter = meters.get((key_of(node.func.value) or "", node.func.attr))
        around = [l for l in loops if _within(node, l)]
        if meter is None or not around:
            continue
        loop = max(around, key=lambda l: l.lineno)  # the innermost loop: the one over batches
        if batch_mean(ctx, scope, loop, node.args[0], node.lineno):
            yield from _report(ctx, node, loop, f"`{ctx.snippet(node)}` gives every batch's mean the same weight in "
                                                f"`{meter}`, which averages over calls")


def _meters(ctx: FileContext) -> dict[tuple[str, str], str]:
    """(key, method) -> class, for each key the file assigns once from an averager class of the project whose
    ``method`` counts calls, not samples. Once per file."""
    cached = ctx.__dict__.get("_tw302_meters")
    if cached is not None:
        return cached
    values: dict[str, list[ast.expr]] = {}
    for node in ctx.assigns:
        for target in node.targets:
            if (key := key_of(target)) is not None:
                values.setdefault(key, []).append(node.value)
    found: dict[tuple[str, str], str] = {}
    divides: dict[ast.ClassDef, bool] = {}  # a class built under several keys is read once
    for key, assigned in values.items():
        if len(assigned) != 1 or not isinstance(assigned[0], ast.Call):
            continue
        cls = _class_def(ctx, assigned[0].func)
        if cls is not None and cls not in divides:
            divides[cls] = _divides_sum_by_count(cls)
        if cls is None or not divides[cls]:
            continue
        for item in cls.body:
            if isinstance(item, ast.FunctionDef) and _counts_calls(item):
                found[(key, item.name)] = cls.name
    ctx.__dict__["_tw302_meters"] = found
    return found


def _class_def(ctx: FileContext, func: ast.expr) -> ast.ClassDef | None:
    """A class of this file, or of another file of the tree that this file imports it from."""
    name = key_of(func)
    if name in ctx.classes:
        return ctx.classes[name]  # type: ignore[index]
    project = ctx.project
    if project is None or name is None or "." in name:
        return None
    if name in ctx.relative_imports:
        level, module, attr = ctx.relative_imports[name]
    elif name in ctx.imports:
        (module, _, attr), level = ctx.imports[name].rpartition("."), 0
    else:
        return None
    path = project.module_file(Path(ctx.path), module, level) if module or level else None
    target = project.context(path) if path is not None else None
    return target.classes.get(attr) if target is not None and target is not ctx else None


def _counts_calls(fn: ast.FunctionDef) -> bool:
    """``def update(self, val, n=1): self.sum += val * n; self.count += n`` or ``self.count += 1``: with its value
    parameter added to one attribute and one (or a weight that defaults to one) to another."""
    params = [a.arg for a in fn.args.args]
    if len(params) < 2:
        return False
    value, weight = params[1], params[2] if len(params) > 2 else None
    if weight is not None:
        defaults = dict(zip(params[len(params) - len(fn.args.defaults):], fn.args.defaults))
        if not (isinstance(defaults.get(weight), ast.Constant) and defaults[weight].value == 1) or len(params) > 3:  # type: ignore[union-attr]
            return False
    adds_value = adds_one = False
    for node in walk(fn):
        if not (isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) and (key_of(node.target) or "").startswith("self.")):
            continue
        names = {n.id for n in walk(node.value) if isinstance(n, ast.Name)}
        if value in names:
            adds_value = True
        elif _number(node.value) and node.value.value == 1 or weight is not None and names == {weight}:  # type: ignore[attr-defined]
            adds_one = True
    return adds_value and adds_one


def _divides_sum_by_count(cls: ast.ClassDef) -> bool:
    """Whether the class divides one of its attributes by another (``self.sum / self.count``): it reports a mean."""
    return any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div) and (key_of(n.left) or "").startswith("self.")
               and (key_of(n.right) or "").startswith("self.") for n in walk(cls))


# -- the batches -------------------------------------------------------------------------------------------------------
def _batches(ctx: FileContext, loop: ast.For | ast.AsyncFor) -> str:
    """"full" when every batch of the loop's loader is provably full, "ragged" when the loop is over a DataLoader the
    project builds (or slices by a stride), "unknown" otherwise."""
    stride = _unwrap(loop.iter)
    ragged = isinstance(stride, ast.Call) and key_of(stride.func) == "range" and len(stride.args) == 3
    for key in _loop_keys(ctx, loop):
        built = _loader(ctx, key)
        if built is None:
            continue
        home, call = built
        if _full(home, call):
            return "full"
        ragged = True
    return "ragged" if ragged else "unknown"


def _loop_keys(ctx: FileContext, loop: ast.For | ast.AsyncFor) -> set[str]:
    keys = {f.iter_key for f in ctx.analysis.frames if f.node is loop and f.iter_key}
    return keys or {k for k in (key_of(_unwrap(loop.iter)),) if k}  # type: ignore[misc]


def _loader(ctx: FileContext, key: str) -> tuple[FileContext, ast.Call] | None:
    """(its file, the ``DataLoader(...)`` call) that ``key`` holds: built here, or returned by a function of another
    file of the tree (``train_loader, val_loader = get_loaders(args)``)."""
    role = ctx.role(key)
    if role is not None and role.kind == "loader" and isinstance(role.node, ast.Call):
        return ctx, role.node
    for node in ctx.assigns:
        if len(node.targets) != 1 or not isinstance(node.value, ast.Call):
            continue
        target = node.targets[0]
        names = [key_of(e) for e in target.elts] if isinstance(target, ast.Tuple) else [key_of(target)]
        if key not in names:
            continue
        local = ctx.functions.get(key_of(node.value.func) or "")
        found = (ctx, local) if local is not None else ctx.project.function(ctx, node.value.func) if ctx.project else None
        if found is None:
            return None
        home, fn = found
        returns = [n.value for n in walk(fn) if isinstance(n, ast.Return) and n.value is not None]
        if len(returns) != 1:
            return None
        value = returns[0]
        if isinstance(target, ast.Tuple):
            if not isinstance(value, ast.Tuple) or len(value.elts) != len(names):
                return None
            value = value.elts[names.index(key)]
        return _built_in(home, fn, value)
    return None


def _built_in(home: FileContext, fn: ast.AST, value: ast.expr) -> tuple[FileContext, ast.Call] | None:
    """The DataLoader call ``value`` is (or a name of ``fn`` holds) in the file ``home``."""
    if isinstance(value, ast.Name):
        values = reaching(home, fn, value.id, value.lineno)
        value = values[0] if len(values) == 1 and isinstance(values[0], ast.expr) else value
    role = home.classify(value) if isinstance(value, ast.expr) else None
    return (home, role.node) if role is not None and role.kind == "loader" and isinstance(role.node, ast.Call) else None


def _full(ctx: FileContext, call: ast.Call) -> bool:
    """Whether every batch of the loader ``call`` builds is provably full."""
    drop = kwarg(call, "drop_last")
    if isinstance(drop, ast.Constant) and drop.value is True:
        return True
    batch = kwarg(call, "batch_size") or (call.args[1] if len(call.args) > 1 else None)
    if batch is None or isinstance(batch, ast.Constant) and batch.value == 1:
        return True  # batches of one sample: the mean of means is the mean
    size = _size(ctx, call.args[0] if call.args else kwarg(call, "dataset"), 0)
    return isinstance(batch, ast.Constant) and isinstance(batch.value, int) and size is not None and bool(batch.value) \
        and size % batch.value == 0


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
