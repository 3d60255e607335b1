"""Shapes known in part, for TW304: the rank, the first (batch) and the last dimension of a tensor, where its full
shape is not known. Enough to prove that a model's ``[N, 1]`` output (a GAN discriminator's validity) meets a
``[N]`` target: they broadcast to ``[N, N]`` whatever the other sizes are.

Read through the ``forward`` of the project's module classes, layer by layer: layers that keep the batch dimension
(convolutions, norms, activations, dropout, pooling, upsampling), ``nn.Linear`` (which sets the last), ``view`` /
``reshape`` whose first size is the input's own batch (``out.view(out.shape[0], -1)``), ``torch.cat`` along the
last dimension. Anything else is unknown, and unknown is silent.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from trainwell.lint.context import FileContext, key_of, kwarg, method_name
from trainwell.lint.dataflow import Element, definitions, reaching
from trainwell.lint.rules._data import loader_argument, qual_last, single_value
from trainwell.lint.syntax import walk

Partial = tuple[int | None, int | None, int | None]  # (rank, first dimension, last dimension)
FullShape = Callable[[FileContext, ast.AST, ast.AST, int], "tuple[int, ...] | None"]
# The batch dimension of a loader whose batch_size is not a literal (`batch_size=args.batch_size`): some size above
# one, the same for every tensor of the batch. Shown as N.
BATCH = 2**31 - 1
_KEEP_ALL = {"ReLU", "LeakyReLU", "Tanh", "Sigmoid", "GELU", "SiLU", "ELU", "Softplus", "Mish", "PReLU", "Dropout",
             "Identity", "BatchNorm1d", "LayerNorm"}  # the whole shape
_KEEP_BATCH = _KEEP_ALL | {"Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "BatchNorm2d",
                           "BatchNorm3d", "InstanceNorm2d", "Dropout2d", "Dropout3d", "MaxPool2d", "AvgPool2d", "MaxPool1d",
                           "AvgPool1d", "Upsample", "ZeroPad2d", "ReflectionPad2d", "AdaptiveAvgPool2d"}  # rank and batch
_SAME = {"float", "double", "detach", "cuda", "cpu", "contiguous", "fill_", "requires_grad_", "clone", "to", "type"}
_FACTORIES = {"ones", "zeros", "empty", "rand", "randn"}
_TENSOR_TYPES = ("FloatTensor", "DoubleTensor", "Tensor", "HalfTensor", "LongTensor", "IntTensor")


def partial(ctx: FileContext, node: ast.AST | None, scope: ast.AST, line: int, full: FullShape, depth: int = 0) -> Partial | None:
    """(rank, first, last) of a tensor expression, each None when unknown; None when nothing is known. ``full`` gives
    the whole shape where it is known (the rule's own reading), tried first."""
    if node is None or depth > 16:
        return None
    known = full(ctx, node, scope, line)
    if known:
        return len(known), known[0], known[-1]
    if isinstance(node, ast.Name):
        values = reaching(ctx, scope, node.id, line)
        if len(values) != 1 or isinstance(values[0], ast.AugAssign):
            return None
        value = values[0]
        if isinstance(value, (ast.For, ast.AsyncFor)):
            return _batch_element(ctx, value, node.id)
        if isinstance(value, Element):
            call = value.value
            return _model_output(ctx, call, scope, line, full, depth, value.index) if isinstance(call, ast.Call) else None
        return partial(ctx, value, scope, getattr(value, "lineno", line), full, depth + 1)
    if not isinstance(node, ast.Call):
        return None
    qual = ctx.call_name(node) or ""
    name = method_name(node)
    if qual.endswith("autograd.Variable") and node.args:
        return partial(ctx, node.args[0], scope, line, full, depth + 1)
    if name in _SAME and not qual:
        return partial(ctx, node.func.value, scope, line, full, depth + 1)  # type: ignore[attr-defined]
    if qual.startswith("torch.") and qual.rsplit(".", 1)[-1] in _FACTORIES and node.args \
            and not any(isinstance(a, (ast.Starred, ast.Tuple, ast.List)) for a in node.args):
        sizes = [_size(ctx, a, scope, line, full, depth) for a in node.args]
        return (len(sizes), sizes[0], sizes[-1]) if sizes else None  # `torch.ones(imgs.size(0), 1)`
    if _tensor_type(ctx, node.func, scope) and node.args:
        if len(node.args) == 1 and not _size(ctx, node.args[0], scope, line, full, depth):
            return partial(ctx, node.args[0], scope, line, full, depth + 1)  # `Tensor(np.random.normal(0, 1, (n, d)))`: its data
        sizes = [_size(ctx, a, scope, line, full, depth) for a in node.args]
        return len(sizes), sizes[0], sizes[-1]  # `Tensor(imgs.shape[0], 1)`: new, of those sizes
    if qual.startswith("numpy.random.") and qual.rsplit(".", 1)[-1] in ("normal", "uniform", "randint") and len(node.args) == 3:
        given = node.args[2].elts if isinstance(node.args[2], ast.Tuple) else [node.args[2]]  # the size
        sizes = [_size(ctx, a, scope, line, full, depth) for a in given]
        return (len(sizes), sizes[0], sizes[-1]) if sizes else None
    if name == "expand" and node.args and not qual:
        return len(node.args), _size(ctx, node.args[0], scope, line, full, depth), None
    return _model_output(ctx, node, scope, line, full, depth, None)


def _size(ctx: FileContext, node: ast.AST, scope: ast.AST, line: int, full: FullShape, depth: int) -> int | None:
    """A dimension: a literal, ``x.shape[0]`` / ``x.size(0)`` of a tensor whose first dimension is known, or a name the
    function assigns one of those (``batch_size = imgs.shape[0]``)."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.Name):
        values = reaching(ctx, scope, node.id, line)
        return _size(ctx, values[0], scope, getattr(values[0], "lineno", line), full, depth + 1) \
            if len(values) == 1 and isinstance(values[0], ast.expr) and depth < 16 else None
    tensor = None
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "shape" \
            and isinstance(node.slice, ast.Constant) and node.slice.value == 0:
        tensor = node.value.value
    elif isinstance(node, ast.Call) and method_name(node) == "size" and len(node.args) == 1 \
            and isinstance(node.args[0], ast.Constant) and node.args[0].value == 0:
        tensor = node.func.value  # type: ignore[attr-defined]
    found = partial(ctx, tensor, scope, line, full, depth + 1) if tensor is not None else None
    return found[1] if found is not None else None


def _tensor_type(ctx: FileContext, func: ast.expr, scope: ast.AST) -> bool:
    """``torch.FloatTensor``, or a name every assignment of which is a torch tensor type (``Tensor =
    torch.cuda.FloatTensor if cuda else torch.FloatTensor``)."""
    def one(node: ast.expr) -> bool:
        if isinstance(node, ast.IfExp):
            return one(node.body) and one(node.orelse)
        qual = ctx.qualname(node) or ""
        return qual.startswith("torch.") and qual.rsplit(".", 1)[-1] in _TENSOR_TYPES
    if one(func):
        return True
    if not isinstance(func, ast.Name):
        return False
    values = [v for _, v in definitions(ctx, scope).get(func.id, []) or definitions(ctx, ctx.tree).get(func.id, [])]
    return bool(values) and all(isinstance(v, ast.expr) and one(v) for v in values)


def _batch_element(ctx: FileContext, loop: ast.For | ast.AsyncFor, name: str) -> Partial | None:
    """An item of a batch of a DataLoader built in the file with a batch size other than one: its first dimension
    is the batch (some size above one, the same for every item)."""
    iterable, target = loop.iter, loop.target
    while isinstance(iterable, ast.Call) and key_of(iterable.func) in ("enumerate", "tqdm", "tqdm.tqdm") and iterable.args:
        if key_of(iterable.func) == "enumerate" and isinstance(target, ast.Tuple) and len(target.elts) == 2:
            target = target.elts[1]
        iterable = iterable.args[0]
    if isinstance(iterable, ast.Call) and key_of(iterable.func) == "zip" and isinstance(target, ast.Tuple) \
            and len(target.elts) == len(iterable.args):  # `for (x1, _), (x2, _) in zip(loader1, loader2)`
        iterable = next((a for a, t in zip(iterable.args, target.elts) if any(isinstance(n, ast.Name) and n.id == name
                                                                                 for n in walk(t))), iterable)
    loader = single_value(ctx, iterable)
    if not isinstance(loader, ast.Call) or qual_last(ctx, loader) != "DataLoader" or not any(
            isinstance(n, ast.Name) and n.id == name for n in walk(loop.target)):
        return None
    given = loader_argument(loader, "batch_size")
    if given is None or isinstance(given, ast.Constant) or any(loader_argument(loader, n) is not None for n in ("collate_fn", "batch_sampler")):
        return None
    return None, BATCH, None


def _model_output(ctx: FileContext, call: ast.Call, scope: ast.AST, line: int, full: FullShape, depth: int,
                  index: int | None) -> Partial | None:
    """What a model of a module class of the file returns (the ``index``-th item of a returned tuple, where given)."""
    role = ctx.role(key_of(call.func))
    if role is None or role.kind != "model" or role.cls not in ctx.classes or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    forward = ctx.methods.get(role.cls, {}).get("forward")
    if forward is None or depth > 12:
        return None
    params = [a.arg for a in forward.args.args][1:]
    env = {p: partial(ctx, a, scope, line, full, depth + 1) for p, a in zip(params, call.args)}
    return _run(ctx, role.cls, forward, env, index, depth)


def _run(ctx: FileContext, cls: str, fn: ast.AST, env: dict[str, Partial | None], index: int | None, depth: int) -> Partial | None:
    """The partial shape ``fn`` returns, its statements read in order with ``env`` (name -> partial shape)."""
    returned: list[Partial | None] = []
    for stmt in fn.body:  # type: ignore[attr-defined]
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            env[stmt.targets[0].id] = _eval(ctx, cls, stmt.value, env, depth)
        elif isinstance(stmt, ast.Return) and stmt.value is not None:
            value = stmt.value
            if index is not None:
                value = value.elts[index] if isinstance(value, ast.Tuple) and len(value.elts) > index else None  # type: ignore[assignment]
            returned.append(_eval(ctx, cls, value, env, depth) if value is not None else None)
        elif isinstance(stmt, (ast.Assign, ast.AugAssign, ast.If, ast.For, ast.While, ast.With, ast.Try)):
            return None  # a path the reading does not follow
    return returned[0] if len(returned) == 1 else None


def _eval(ctx: FileContext, cls: str, node: ast.expr, env: dict[str, Partial | None], depth: int) -> Partial | None:
    if isinstance(node, ast.Name):
        return env.get(node.id)
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if isinstance(func, ast.Attribute) and key_of(func.value) == "self" and len(node.args) == 1 and not node.keywords:
        layer = _submodule(ctx, cls, func.attr)
        return _through(ctx, layer, _eval(ctx, cls, node.args[0], env, depth), depth) if layer is not None else None
    name = method_name(node)
    if name in ("view", "reshape") and node.args and isinstance(func, ast.Attribute):
        base = _eval(ctx, cls, func.value, env, depth)
        first, last = node.args[0], node.args[-1]
        batch = base[1] if base is not None and _batch_of(first, func.value) else first.value if isinstance(first, ast.Constant) \
            else _batch_in(first, env)
        if any(isinstance(a, ast.Starred) for a in node.args):  # `img.view(img.size(0), *img_shape)`: the batch only
            return None, batch, None  # type: ignore[return-value]
        return len(node.args), batch, last.value if isinstance(last, ast.Constant) and last.value != -1 else None  # type: ignore[return-value]
    if name in _SAME and isinstance(func, ast.Attribute):
        return _eval(ctx, cls, func.value, env, depth)
    if (ctx.call_name(node) or "") == "torch.cat" and node.args and isinstance(node.args[0], (ast.Tuple, ast.List)) \
            and node.args[0].elts and _last_dim(node):
        first = _eval(ctx, cls, node.args[0].elts[0], env, depth)  # the other parts must match it, or torch raises
        return (first[0], first[1], None) if first is not None and first[0] is not None else None
    if (ctx.call_name(node) or "") in ("torch.mul", "torch.add") and len(node.args) == 2:
        parts = [_eval(ctx, cls, a, env, depth) for a in node.args]  # element-wise: same batch, or torch raises
        return (parts[0][0], parts[0][1], None) if parts[0] is not None and parts[1] is not None and parts[0][:2] == parts[1][:2] \
            and parts[0][0] is not None and parts[0][1] is not None else None
    if name == "expand" and node.args and isinstance(func, ast.Attribute):
        base = _eval(ctx, cls, func.value, env, depth)
        return (len(node.args), base[1], None) if base is not None and _batch_of(node.args[0], func.value) else None
    return None


def _batch_in(size: ast.expr, env: dict[str, Partial | None]) -> int | None:
    """The batch of a tensor of ``env`` that ``size`` reads (``z.size(0)`` of the forward's input ``z``)."""
    for name, known in env.items():
        if known is not None and _batch_of(size, ast.Name(id=name)):
            return known[1]
    return None


def _batch_of(size: ast.expr, tensor: ast.expr) -> bool:
    """``x.shape[0]`` / ``x.size(0)`` of the very tensor being reshaped."""
    if isinstance(size, ast.Subscript) and isinstance(size.value, ast.Attribute) and size.value.attr == "shape":
        return isinstance(size.slice, ast.Constant) and size.slice.value == 0 and key_of(size.value.value) == key_of(tensor)
    return isinstance(size, ast.Call) and method_name(size) == "size" and len(size.args) == 1 and isinstance(size.args[0], ast.Constant) \
        and size.args[0].value == 0 and key_of(size.func.value) == key_of(tensor)  # type: ignore[attr-defined]


def _last_dim(cat: ast.Call) -> bool:
    dim = cat.args[1] if len(cat.args) > 1 else kwarg(cat, "dim")
    return isinstance(dim, ast.UnaryOp) and isinstance(dim.op, ast.USub) and isinstance(dim.operand, ast.Constant) and dim.operand.value == 1


def _submodule(ctx: FileContext, cls: str, attr: str) -> tuple[ast.AST, ast.expr] | None:
    """(the method, the value) of the one assignment of ``self.<attr>`` in the class."""
    found = [(m, n.value) for m in ctx.methods.get(cls, {}).values() for n in walk(m)
             if isinstance(n, ast.Assign) and any(key_of(t) == f"self.{attr}" for t in n.targets)]
    return found[0] if len(found) == 1 else None


def _through(ctx: FileContext, layer: tuple[ast.AST, ast.expr], x: Partial | None, depth: int) -> Partial | None:
    """The partial shape a layer gives for an input of partial shape ``x``."""
    method, value = layer
    if x is None or not isinstance(value, ast.Call):
        return None
    qual = ctx.call_name(value) or ""
    last = qual.rsplit(".", 1)[-1] if qual.startswith("torch.nn.") else ""
    if last == "Linear":
        size = value.args[1] if len(value.args) > 1 else kwarg(value, "out_features")
        out = size.value if isinstance(size, ast.Constant) and type(size.value) is int else None
        return (x[0], x[1], out) if x[0] is not None and x[0] >= 2 else None
    if last == "Embedding":  # indices [*] -> vectors [*, d]
        size = value.args[1] if len(value.args) > 1 else kwarg(value, "embedding_dim")
        out = size.value if isinstance(size, ast.Constant) and type(size.value) is int else None
        return (x[0] + 1 if x[0] is not None else None), x[1], out
    if last in _KEEP_ALL:
        return x
    if last in _KEEP_BATCH:
        return x[0], x[1], None
    if last == "Sequential":
        for item in value.args:
            if isinstance(item, ast.Starred):
                if not _keeps_batch(ctx, method, item.value, x[0] is not None and x[0] >= 2):
                    return None
                x = (x[0], x[1], None)
            else:
                x = _through(ctx, (method, item), x, depth)  # type: ignore[assignment]
                if x is None:
                    return None
        return x
    return None


def _keeps_batch(ctx: FileContext, method: ast.AST, listed: ast.expr, matrix: bool) -> bool:
    """``*block(16, 32)``: a call of a function defined in ``method`` whose every layer keeps the rank and the batch
    (``nn.Linear`` too, on an input of rank two or more: ``matrix``)."""
    if not isinstance(listed, ast.Call) or not isinstance(listed.func, ast.Name):
        return False
    fn = next((n for n in walk(method) if isinstance(n, ast.FunctionDef) and n.name == listed.func.id), None)
    made = [n for n in walk(fn) if isinstance(n, ast.Call) and (ctx.call_name(n) or "").startswith("torch.nn.")] if fn else []
    keep = _KEEP_BATCH | ({"Linear"} if matrix else set())
    return bool(made) and all((ctx.call_name(n) or "").rsplit(".", 1)[-1] in keep for n in made)
