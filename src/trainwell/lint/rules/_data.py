"""Facts about data pipelines shared by the data rules (TW110, TW111, TW305, TW405, TW406).

Small readers over the file's assignments and the loop model: what a key was
assigned, which DataLoader argument holds what, which loops read a loader and
whether they train. Each returns None (unknown) when the file does not say.
"""

from __future__ import annotations

import ast

from trainwell.lint import events as ev
from trainwell.lint.context import (
    FileContext,
    has_star_kwargs,
    key_of,
    kwarg,
    strip_identity,
    walk,
)
from trainwell.lint.events import Frame

# DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers, collate_fn, ...)
LOADER_ARGS = ("dataset", "batch_size", "shuffle", "sampler", "batch_sampler", "num_workers", "collate_fn")


def argument(call: ast.Call, name: str, positional: tuple[str, ...]) -> ast.expr | None:
    """The value given for parameter ``name`` of ``call`` (keyword or position in ``positional``)."""
    value = kwarg(call, name)
    if value is None and name in positional:
        index = positional.index(name)
        if len(call.args) > index and not any(isinstance(a, ast.Starred) for a in call.args[: index + 1]):
            value = call.args[index]
    return value


def loader_argument(call: ast.Call, name: str) -> ast.expr | None:
    return argument(call, name, LOADER_ARGS)


def assigned(ctx: FileContext, key: str) -> list[ast.expr]:
    """Every value the file assigns to ``key`` (plain single-target assignments and annotated ones; an element
    of a tuple that a local function returns, ``data, model = build()``)."""
    return _assignments(ctx).get(key, [])


def _assignments(ctx: FileContext) -> dict[str, list[ast.expr]]:
    """key -> the values assigned to it, for the whole file: built once per file."""
    cached = ctx.__dict__.get("_data_assignments")
    if cached is not None:
        return cached
    found: dict[str, list[ast.expr]] = {}
    for node in ctx.nodes_of(ast.Assign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.With):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                key = key_of(target)
                if key is not None:
                    found.setdefault(key, []).append(node.value)
                elif isinstance(target, (ast.Tuple, ast.List)):
                    _unpacked(ctx, node, target, found)
        elif isinstance(node, ast.AnnAssign) and node.value is not None and key_of(node.target) is not None:
            found.setdefault(key_of(node.target), []).append(node.value)  # type: ignore[arg-type]
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            _unpacked(ctx, None, node.target, found)
        elif isinstance(node, ast.With):
            for item in node.items:
                if item.optional_vars is not None:
                    _unpacked(ctx, None, item.optional_vars, found)
    ctx.__dict__["_data_assignments"] = found
    return found


def _unpacked(ctx: FileContext, node: ast.Assign | None, target: ast.AST, found: dict[str, list[ast.expr]]) -> None:
    """Keys bound by unpacking: the element a local function returns for them, else an unreadable value."""
    for sub in walk(target):
        key = key_of(sub) if isinstance(sub, (ast.Name, ast.Attribute)) else None
        if key is None or (isinstance(sub, ast.Name) and isinstance(getattr(sub, "ctx", None), ast.Load)):
            continue
        element = _returned_element(ctx, node, key) if node is not None else None
        found.setdefault(key, []).append(element if element is not None else ast.Constant(value=None))


def _returned_element(ctx: FileContext, node: ast.Assign, key: str) -> ast.expr | None:
    """``a, b = build()`` where ``build`` returns one tuple ``(x, y)`` (or ``a, b = x, y``): the element bound to ``key``."""
    if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Tuple):
        return None
    names = [key_of(e) for e in node.targets[0].elts]
    if isinstance(node.value, (ast.Tuple, ast.List)) and len(node.value.elts) == len(names) and key in names:
        return node.value.elts[names.index(key)]  # `N, D = 1000, 13`
    if not isinstance(node.value, ast.Call):
        return None
    fn = ctx.functions.get(key_of(node.value.func) or "")
    returns = [n.value for n in walk(fn) if isinstance(n, ast.Return) and n.value is not None] if fn else []
    names = [key_of(e) for e in node.targets[0].elts]
    if len(returns) != 1 or not isinstance(returns[0], ast.Tuple) or len(returns[0].elts) != len(names) or key not in names:
        return None
    return returns[0].elts[names.index(key)]


def value_of(ctx: FileContext, node: ast.expr | None, depth: int = 0) -> ast.expr | None:
    """What ``node`` holds, followed through single assignments, aliases and the single ``return`` of a local
    function or of the one method of that name of the file's classes (``loader = make_loader(data)``,
    ``self.train_loader = self._prepare_dataloader(data)`` -> the ``DataLoader(...)`` it returns); None when unknown."""
    if node is None or depth > 6:
        return None
    if key_of(node) is not None:
        return value_of(ctx, single_value(ctx, node), depth + 1)
    fn = None
    if isinstance(node, ast.Call) and key_of(node.func) in ctx.functions:
        fn = ctx.functions[key_of(node.func)]  # type: ignore[index]
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and key_of(node.func.value) == "self":
        methods = [ms[node.func.attr] for ms in ctx.methods.values() if node.func.attr in ms]
        fn = methods[0] if len(methods) == 1 else None
    if fn is not None:
        returns = [n.value for n in walk(fn) if isinstance(n, ast.Return) and n.value is not None]
        if len(returns) == 1 and not isinstance(returns[0], ast.Tuple):
            return value_of(ctx, returns[0], depth + 1)
    if isinstance(node, ast.Constant) and node.value is None:
        return None
    return node


def single_value(ctx: FileContext, node: ast.expr | None) -> ast.expr | None:
    """``node`` itself, or for a key the one value the file ever assigns it (None when several or none)."""
    if node is None:
        return None
    key = key_of(node)
    if key is None:
        return node
    values = assigned(ctx, key)
    return values[0] if len(values) == 1 else None


def qual_last(ctx: FileContext, call: ast.AST) -> str:
    """``DistributedSampler`` for any resolved spelling of the callee; '' when not resolved through an import."""
    qual = ctx.call_name(call) if isinstance(call, ast.Call) else None
    return qual.rsplit(".", 1)[-1] if qual else ""


def loader_calls(ctx: FileContext) -> list[tuple[str, ast.Call]]:
    """(key, the DataLoader call) for every key that holds a loader built here: by its role, or through
    helpers that return one and attributes that keep one (``self.train_data = train_data``). Once per file."""
    cached = ctx.__dict__.get("_data_loader_calls")
    if cached is not None:
        return cached
    found: list[tuple[str, ast.Call]] = []
    for key, role in ctx.roles.items():
        if role.kind == "loader" and isinstance(role.node, ast.Call) and not has_star_kwargs(role.node):
            found.append((key, role.node))
    known = {key for key, _ in found}
    for node in ctx.assigns:
        for target in node.targets:
            key = key_of(target)
            if key is None or key in known:
                continue
            value = value_of(ctx, target)
            if isinstance(value, ast.Call) and qual_last(ctx, value) == "DataLoader" and not has_star_kwargs(value):
                found.append((key, value))
                known.add(key)
    ctx.__dict__["_data_loader_calls"] = found
    return found


def loops_over(ctx: FileContext, key: str) -> list[Frame]:
    """The loops (after inlining helpers) whose iterable is ``key`` or an alias of it."""
    out = []
    for frame in ctx.analysis.frames:
        if frame.kind == "loop" and frame.iter_key is not None and ctx.analysis.same(frame.iter_key, key):
            out.append(frame)
    return out


def trains(frame: Frame) -> bool:
    """Whether one iteration of ``frame`` runs backward() and an optimizer step."""
    return any(e.kind == ev.BACKWARD and e.grad is not False for e in frame.events) and frame.has(ev.STEP)


def epoch_loop(frame: Frame) -> Frame | None:
    """The loop around ``frame`` that repeats it (an epoch loop), when it may run more than once."""
    parent = frame.parent
    while parent is not None and parent.kind == "loop":
        node = parent.node
        if isinstance(node, ast.While):
            return parent
        if isinstance(node, (ast.For, ast.AsyncFor)):
            once = _single_pass(node.iter)
            if once is None or not once:
                return parent
        parent = parent.parent
    return None


def _single_pass(iterable: ast.expr) -> bool | None:
    """True for ``range(1)``; False for any other range; None when it is not a range."""
    if isinstance(iterable, ast.Call) and key_of(iterable.func) in ("range", "trange"):
        args = iterable.args
        if len(args) == 1 and isinstance(args[0], ast.Constant):
            return args[0].value in (0, 1)
        if len(args) >= 2 and all(isinstance(a, ast.Constant) for a in args[:2]):
            return args[1].value - args[0].value <= 1  # type: ignore[operator]
        return False
    return None


def constructor(ctx: FileContext, node: ast.expr | None, names: set[str]) -> ast.Call | None:
    """The call of one of the classes ``names`` (resolved through imports) that ``node`` is or holds."""
    value = single_value(ctx, node)
    if value is None:
        return None
    value = strip_identity(value)
    if isinstance(value, ast.Call) and qual_last(ctx, value) in names:
        return value
    return None


def mentions(node: ast.AST, words: tuple[str, ...]) -> bool:
    """Whether any name or attribute in ``node`` contains one of ``words`` (lower case)."""
    for sub in walk(node):
        text = sub.id if isinstance(sub, ast.Name) else sub.attr if isinstance(sub, ast.Attribute) else None
        if text is not None and any(w in text.lower() for w in words):
            return True
    return False


_SIZED = {"randn", "rand", "zeros", "ones", "empty", "randint", "arange", "full", "tensor"}


def dataset_length(ctx: FileContext, node: ast.expr | None, depth: int = 0) -> int | None:
    """The number of samples of a dataset the file spells out: ``TensorDataset(torch.randn(64, 8), ...)``,
    ``range(64)``, ``Subset(ds, range(64))``, through single assignments; None when unknown."""
    value = value_of(ctx, node) if node is not None and depth <= 4 else None
    if not isinstance(value, ast.Call):
        return None
    name = (key_of(value.func) or "").rsplit(".", 1)[-1]
    if name == "range" and len(value.args) == 1:
        return _int(value.args[0])
    if name == "TensorDataset" and value.args:
        return dataset_length(ctx, value.args[0], depth + 1)
    if name == "Subset" and len(value.args) == 2:
        return dataset_length(ctx, value.args[1], depth + 1)
    if name in _SIZED and value.args and (key_of(value.func) or "").startswith("torch"):
        if name == "randint":
            shape = value.args[-1] if isinstance(value.args[-1], (ast.Tuple, ast.List)) else kwarg(value, "size")
            return _int(shape.elts[0]) if isinstance(shape, (ast.Tuple, ast.List)) and shape.elts else None
        if name == "arange":
            return _int(value.args[0]) if len(value.args) == 1 else None
        first = value.args[0]
        if isinstance(first, (ast.Tuple, ast.List)):
            first = first.elts[0] if first.elts else None
        return _int(first) if name != "tensor" else None
    return None


def known_length(ctx: FileContext, loader: ast.AST | None) -> int | None:
    """``len(loader)`` (the number of batches) of a ``DataLoader(...)`` call whose dataset size and batch size the
    file spells out (no sampler); None when unknown."""
    if not isinstance(loader, ast.Call) or has_star_kwargs(loader):
        return None
    if any(loader_argument(loader, name) is not None for name in ("sampler", "batch_sampler")):
        return None
    size = dataset_length(ctx, loader_argument(loader, "dataset"))
    batch = loader_argument(loader, "batch_size")
    batch_size = 1 if batch is None else _int(single_value(ctx, batch))
    if size is None or not batch_size:
        return None
    drop = kwarg(loader, "drop_last")
    if isinstance(drop, ast.Constant) and drop.value is True:
        return size // batch_size
    if drop is None or (isinstance(drop, ast.Constant) and drop.value is False):
        return -(-size // batch_size)
    return None


def _int(node: ast.AST | None) -> int | None:
    return node.value if isinstance(node, ast.Constant) and type(node.value) is int else None


def spread_keys(ctx: FileContext, call: ast.Call) -> set[str] | None:
    """The keys that ``**kwargs`` spreads into the call, when every value the file gives ``kwargs`` is a dict
    written here (``{"num_workers": 1} if cuda else {}``, ``dict(batch_size=8)``) and nothing adds to it; None when unknown."""
    keys: set[str] = set()
    if any(isinstance(a, ast.Starred) for a in call.args):
        return None
    for spread in (k.value for k in call.keywords if k.arg is None):
        name = key_of(spread)
        if name is None:
            return None
        values = [a.value for a in ctx.assignments_to({name})]
        if not values or any(_changed(node, name) or _bound_otherwise(node, name) for node in ctx.nodes):
            return None
        for value in values:
            written = _dict_keys(value)
            if written is None:
                return None
            keys |= written
    return keys


def _dict_keys(value: ast.expr) -> set[str] | None:
    if isinstance(value, ast.IfExp):
        body, orelse = _dict_keys(value.body), _dict_keys(value.orelse)
        return None if body is None or orelse is None else body | orelse
    if isinstance(value, ast.Dict):
        if not all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in value.keys):
            return None  # a `**other` inside, or a computed key
        return {k.value for k in value.keys}  # type: ignore[union-attr]
    if isinstance(value, ast.Call) and key_of(value.func) == "dict" and not value.args:
        return None if any(k.arg is None for k in value.keywords) else {k.arg for k in value.keywords}  # type: ignore[misc]
    return None


def _bound_otherwise(node: ast.AST, name: str) -> bool:
    """``def make(**kwargs)``, ``for kwargs in settings``, ``with ... as kwargs``: the name also holds values the
    file does not write as a dict."""
    if isinstance(node, ast.arg):
        return node.arg == name
    targets = [node.target] if isinstance(node, (ast.For, ast.AsyncFor, ast.AnnAssign, ast.AugAssign)) else \
        [i.optional_vars for i in node.items if i.optional_vars is not None] if isinstance(node, (ast.With, ast.AsyncWith)) else \
        [t for t in node.targets if not isinstance(t, (ast.Name, ast.Attribute))] if isinstance(node, ast.Assign) else []
    return any(key_of(n) == name for t in targets for n in walk(t))


def _changed(node: ast.AST, name: str) -> bool:
    """``kwargs["shuffle"] = True``, ``kwargs.update(...)``, ``kwargs |= ...``: the dict is not only what was written."""
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)) and key_of(node.value) == name:
        return True
    if isinstance(node, ast.AugAssign) and key_of(node.target) == name:
        return True
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and key_of(node.func.value) == name \
        and node.func.attr in ("update", "setdefault", "__setitem__", "pop", "clear")
