"""TW304: an element-wise loss between two tensors whose shapes differ but broadcast ([N, 1] against [N]).

Static only where both shapes are known: each is followed back through local
assignments to constructors with literal sizes (``torch.randn(64, 1)``, numpy
arrays made into tensors: ``torch.from_numpy(np.random.rand(64, 1))``),
slices, reductions, ``unsqueeze``, a ``TensorDataset`` read by a DataLoader with
a literal ``batch_size``, and models whose last layer is an ``nn.Linear`` with
a literal ``out_features``. Any dimension we cannot read leaves the pair
unknown, and unknown is silent. The runtime probe sees every shape.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Iterator

from trainwell.diagnostic import Finding
from trainwell.lint.context import FileContext, key_of, kwarg, method_name
from trainwell.lint.dataflow import reaching
from trainwell.lint.loss_calls import loss_calls
from trainwell.lint.rules._batch_shapes import BATCH, partial
from trainwell.lint.rules._data import loader_argument, qual_last, single_value
from trainwell.lint.syntax import walk

CODE = "TW304"
_LOSSES = {"MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss"}
_FACTORIES = {"randn", "rand", "zeros", "ones", "empty", "full"}
_SAME = {"float", "double", "half", "long", "int", "bool", "to", "detach", "clone", "cuda", "cpu", "contiguous",
         "abs", "exp", "log", "sigmoid", "tanh", "relu", "sqrt", "neg", "pow", "clamp", "requires_grad_", "astype", "type"}
_NUMPY_FACTORIES = {"rand", "randn", "zeros", "ones", "empty", "random", "uniform", "normal", "randint"}
_FROM_DATA = {"from_numpy", "tensor", "as_tensor", "Tensor", "FloatTensor", "DoubleTensor", "LongTensor"}
_REDUCE = {"sum", "mean", "amax", "amin", "prod", "std", "var", "norm", "logsumexp"}
_ELEMENTWISE = {"ReLU", "Tanh", "Sigmoid", "GELU", "SiLU", "LeakyReLU", "ELU", "Dropout", "Identity", "Softplus", "Mish"}
Shape = tuple[int, ...]


def check(ctx: FileContext) -> Iterator[Finding]:
    for call, loss, first, scope in loss_calls(ctx, _LOSSES):
        target = call.args[1] if len(call.args) > 1 else kwarg(call, "target")
        yield from _compare(ctx, call, loss, first, target, scope)
    for node in ctx.calls:  # a hand-written error is a call (`.mean()`): the file's calls, not its every node
        pair = _hand_written(node)
        if pair is not None:
            scope = _scope_of(ctx, node)
            if scope is not None:
                yield from _compare(ctx, node, "a hand-written squared/absolute error", pair[0], pair[1], scope)


def _compare(ctx: FileContext, node: ast.AST, loss: str, first: ast.expr | None, second: ast.expr | None, scope: ast.AST) -> Iterator[Finding]:
    line = node.lineno  # type: ignore[attr-defined]
    a = shape(ctx, first, scope, line) if first is not None else None
    b = shape(ctx, second, scope, line) if second is not None else None
    if a is None or b is None:
        a, b = _column_and_vector(ctx, first, second, scope, line)  # only the rank and the batch are known
    if a is None or b is None or a == b:
        return
    grid = broadcast(a, b)
    if grid is None or grid == a or grid == b or min(a + b, default=0) < 1:
        return  # not broadcastable (PyTorch raises), or one side is a scalar / per-feature weight
    yield ctx.finding(
        CODE, node,
        f"`{ctx.snippet(node)}`: {loss} compares `{ctx.snippet(first)}` of shape {_show(a)} with `{ctx.snippet(second)}` "  # type: ignore[arg-type]
        f"of shape {_show(b)}; they broadcast to {_show(grid)}, so every prediction is compared with every target and the "
        "model learns to predict their mean.",
        "Make the shapes equal before the loss: `pred.squeeze(-1)` or `target.unsqueeze(-1)` (or `target.view_as(pred)`).",
    )


def _column_and_vector(ctx: FileContext, first: ast.expr | None, second: ast.expr | None, scope: ast.AST,
                       line: int) -> tuple[Shape | None, Shape | None]:
    """The shapes ``[N, 1]`` and ``[M]`` (either way round) where only that much is known of them, N and M above one
    (a GAN discriminator's validity against labels built without their column): enough to broadcast to [N, M]."""
    pa, pb = partial(ctx, first, scope, line, shape), partial(ctx, second, scope, line, shape)
    column = lambda p: p is not None and p[0] == 2 and p[2] == 1 and p[1] is not None and p[1] > 1  # noqa: E731
    vector = lambda p: p is not None and p[0] == 1 and p[1] is not None and p[1] > 1  # noqa: E731
    if column(pa) and vector(pb):
        return (pa[1], 1), (pb[1],)  # type: ignore[index,return-value]
    if vector(pa) and column(pb):
        return (pa[1],), (pb[1], 1)  # type: ignore[index,return-value]
    return None, None


def _show(shape: Shape) -> str:
    return "[" + ", ".join("N" if d == BATCH else str(d) for d in shape) + "]"


def broadcast(a: Shape, b: Shape) -> Shape | None:
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and 1 not in (x, y):
            return None
        out.append(max(x, y))
    return tuple(reversed(out))


def _hand_written(node: ast.AST) -> tuple[ast.expr, ast.expr] | None:
    """(pred, target) of ``((pred - target) ** 2).mean()``, ``torch.mean((a - b).abs())`` and friends."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute) or node.func.attr != "mean":
        return None
    inner = node.args[0] if not node.keywords and node.args and key_of(node.func.value) == "torch" else node.func.value
    if node.args and inner is node.func.value:
        return None  # .mean(dim): a reduction over some dimensions, not the loss
    if isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Pow):
        inner = inner.left
    elif isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and inner.func.attr in ("abs", "pow", "square"):
        inner = inner.func.value
    elif isinstance(inner, ast.Call) and key_of(inner.func) in ("torch.abs", "torch.square") and inner.args:
        inner = inner.args[0]
    else:
        return None
    if isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Sub):
        return inner.left, inner.right
    return None


def _scope_of(ctx: FileContext, node: ast.AST) -> ast.AST | None:
    for scope in [ctx.tree, *ctx.functions.values(), *(m for ms in ctx.methods.values() for m in ms.values())]:
        if any(n is node for n in ctx.scope_members.get(id(scope), [])):
            return scope
    return None


def shape(ctx: FileContext, node: ast.AST | None, scope: ast.AST, line: int, depth: int = 0) -> Shape | None:
    """The shape of a tensor expression when every dimension is a known integer, else None."""
    if node is None or depth > 12:
        return None
    if isinstance(node, ast.Name):
        values = reaching(ctx, scope, node.id, line)
        if not values and isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return _parameter(ctx, scope, node.id, depth)
        if len(values) != 1:
            return None
        value = values[0]
        if isinstance(value, (ast.For, ast.AsyncFor)):
            return _loop_element(ctx, value, node.id, scope, depth)
        if isinstance(value, ast.AugAssign):
            return None
        return shape(ctx, value, scope, getattr(value, "lineno", line), depth + 1)
    if isinstance(node, ast.Subscript):
        return _index(shape(ctx, node.value, scope, line, depth + 1), node.slice)
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.MatMult):
            return _matmul(shape(ctx, node.left, scope, line, depth + 1), shape(ctx, node.right, scope, line, depth + 1))
        left, right = (_operand(ctx, side, scope, line, depth) for side in (node.left, node.right))
        return broadcast(left, right) if left is not None and right is not None else None
    if isinstance(node, ast.Compare) and len(node.comparators) == 1:
        left, right = (_operand(ctx, side, scope, line, depth) for side in (node.left, node.comparators[0]))
        return broadcast(left, right) if left is not None and right is not None else None
    if isinstance(node, ast.Call):
        return _call_shape(ctx, node, scope, line, depth)
    return None


def _parameter(ctx: FileContext, fn: ast.FunctionDef | ast.AsyncFunctionDef, name: str, depth: int) -> Shape | None:
    """The shape of parameter ``name`` of a top-level function that the file calls exactly once, by name."""
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    if name not in params or ctx.functions.get(fn.name) is not fn:
        return None
    calls = [c for c in ctx.calls if key_of(c.func) == fn.name]
    if len(calls) != 1 or any(isinstance(a, ast.Starred) for a in calls[0].args):
        return None
    call = calls[0]
    index = params.index(name)
    arg = call.args[index] if index < len(call.args) else kwarg(call, name)
    caller = _scope_of(ctx, call)
    return shape(ctx, arg, caller, call.lineno, depth + 1) if arg is not None and caller is not None else None


def _operand(ctx: FileContext, node: ast.expr, scope: ast.AST, line: int, depth: int) -> Shape | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return ()
    return shape(ctx, node, scope, line, depth + 1)


def _int(node: ast.AST | None) -> int | None:
    """The value of an integer literal, ``-1`` included."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _int(node.operand)
        return -inner if inner is not None else None
    return node.value if isinstance(node, ast.Constant) and type(node.value) is int else None


def _ints(nodes: list[ast.expr], ctx: FileContext | None = None) -> Shape | None:
    """Literal sizes, or names the file binds once to a literal (``N = 64``)."""
    if len(nodes) == 1 and isinstance(nodes[0], (ast.Tuple, ast.List)):
        nodes = list(nodes[0].elts)
    values = [_int(n) if _int(n) is not None or ctx is None or not isinstance(n, ast.Name) else _int(single_value(ctx, n)) for n in nodes]
    if all(v is not None and v >= 0 for v in values):
        return tuple(values)  # type: ignore[arg-type]
    return None


def _call_shape(ctx: FileContext, call: ast.Call, scope: ast.AST, line: int, depth: int) -> Shape | None:
    qual = ctx.call_name(call) or ""
    last = qual.rsplit(".", 1)[-1]
    if qual.startswith("torch.") and last in _FACTORIES:
        sizes = call.args[:-1] if last == "full" else call.args
        return _ints(list(sizes), ctx) if sizes else _ints([kwarg(call, "size")], ctx) if kwarg(call, "size") is not None else None
    if qual.startswith("torch.") and last == "randint":
        size = kwarg(call, "size") or (call.args[-1] if len(call.args) >= 2 else None)
        return _ints([size], ctx) if isinstance(size, (ast.Tuple, ast.List)) else None
    if qual.startswith("torch.") and last == "linspace" and len(call.args) >= 3:
        return _ints([call.args[2]], ctx)
    if qual.startswith("numpy.") and last in _NUMPY_FACTORIES:
        size = kwarg(call, "size") if last in ("random", "uniform", "normal", "randint") else None
        sizes = [size] if size is not None else list(call.args) if last in ("rand", "randn") else call.args[:1] if last not in (
            "random", "uniform", "normal", "randint") else []
        return _ints(sizes, ctx) if sizes else None  # np.random.rand(64, 1), np.zeros((64, 1)), np.random.normal(size=(64, 1))
    if qual.startswith("torch.") and last in _FROM_DATA and len(call.args) == 1 and not isinstance(call.args[0], (ast.List, ast.Tuple)):
        return shape(ctx, call.args[0], scope, line, depth + 1)  # torch.from_numpy(a), torch.tensor(a): a's shape
    if qual.startswith("torch.") and call.args and (last in _SAME or last in _REDUCE or last == "unsqueeze"):
        base = shape(ctx, call.args[0], scope, line, depth + 1)  # torch.sin(x), torch.sum(x, dim=1)
        if last in _SAME:
            return base
        rest = ast.Call(func=call.func, args=call.args[1:], keywords=call.keywords)
        return _reshaped(last, base, rest)
    name = method_name(call)
    if name is not None and not qual:
        base = call.func.value  # type: ignore[attr-defined]
        if name in _SAME and name != "to" or name == "to" and not any(isinstance(a, ast.Constant) for a in call.args):
            return shape(ctx, base, scope, line, depth + 1)
        if name in ("unsqueeze", "squeeze", *_REDUCE):
            return _reshaped(name, shape(ctx, base, scope, line, depth + 1), call)
        if name == "view_as" and call.args:
            return shape(ctx, call.args[0], scope, line, depth + 1)
        if name in ("view", "reshape"):
            return _view(list(call.args), lambda: shape(ctx, base, scope, line, depth + 1))
    role = ctx.role(key_of(call.func))
    if role is not None and role.kind == "model" and call.args and len(call.args) == 1:
        return _model_output(ctx, role.node, role.cls, shape(ctx, call.args[0], scope, line, depth + 1))
    return None


def _view(args: list[ast.expr], base: Callable[[], Shape | None]) -> Shape | None:
    """The shape ``view``/``reshape`` gives: literal sizes, one ``-1`` worked out from the base's known shape."""
    if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
        args = list(args[0].elts)
    sizes = [_int(a) for a in args]
    if any(v is None or v < -1 for v in sizes) or sizes.count(-1) > 1:
        return None
    if -1 not in sizes:
        return tuple(sizes)  # type: ignore[arg-type]
    known, rest = base(), math.prod(v for v in sizes if v != -1)  # type: ignore[misc]
    if known is None or rest < 1:
        return None
    if known[:1] == (BATCH,) and BATCH not in known[1:]:  # a batch [N, ...]: -1 is N when the rest keeps every other element
        return tuple(BATCH if v == -1 else v for v in sizes) if math.prod(known[1:]) == rest else None  # type: ignore[misc]
    if BATCH in known or math.prod(known) % rest:
        return None
    return tuple(math.prod(known) // rest if v == -1 else v for v in sizes)  # type: ignore[misc]


def _reshaped(name: str, base: Shape | None, call: ast.Call) -> Shape | None:
    if base is None:
        return None
    dim_node = call.args[0] if call.args else kwarg(call, "dim")
    if dim_node is None:
        if name == "squeeze":
            return tuple(d for d in base if d != 1)
        return () if name in _REDUCE else None
    dim = _int(dim_node)
    if dim is None:
        return None
    if name == "unsqueeze":
        dim = dim if dim >= 0 else len(base) + 1 + dim
        return base[:dim] + (1,) + base[dim:] if 0 <= dim <= len(base) else None
    dim = dim if dim >= 0 else len(base) + dim
    if not 0 <= dim < len(base):
        return None
    if name == "squeeze":
        return base[:dim] + base[dim + 1:] if base[dim] == 1 else base
    keep = kwarg(call, "keepdim")
    if keep is not None and not isinstance(keep, ast.Constant):
        return None
    return base[:dim] + (1,) + base[dim + 1:] if keep is not None and keep.value else base[:dim] + base[dim + 1:]  # type: ignore[union-attr]


def _index(base: Shape | None, index: ast.expr) -> Shape | None:
    if base is None:
        return None
    items = list(index.elts) if isinstance(index, ast.Tuple) else [index]
    if len(items) > len(base) or any(isinstance(i, ast.Constant) and i.value is Ellipsis for i in items):
        return None
    out: list[int] = []
    for dim, item in zip(base, items):
        if _int(item) is not None:
            continue
        if not isinstance(item, ast.Slice) or item.step is not None:
            return None
        length = _slice_length(dim, item)
        if length is None:
            return None
        out.append(length)
    return tuple(out) + base[len(items):]


def _slice_length(dim: int, item: ast.Slice) -> int | None:
    lower, upper = item.lower, item.upper
    low, up = _int(lower), _int(upper)
    if lower is None and upper is None:
        return dim
    if lower is None and up is not None:
        return min(up, dim) if up >= 0 else max(dim + up, 0)
    if low is not None and upper is None:
        return max(dim - low, 0) if low >= 0 else min(-low, dim)
    if low is not None and up is not None:
        return len(range(dim)[low:up])
    # x[i:i + k]: k rows (the last window may be shorter; the loop over full windows is what trains)
    if isinstance(upper, ast.BinOp) and isinstance(upper.op, ast.Add) and key_of(upper.left) == key_of(lower) is not None:
        if isinstance(upper.right, ast.Constant) and type(upper.right.value) is int:
            return min(upper.right.value, dim)
    return None


def _loop_element(ctx: FileContext, loop: ast.For | ast.AsyncFor, name: str, scope: ast.AST, depth: int) -> Shape | None:
    """The shape of ``name`` bound by ``for x, y in loader`` (a DataLoader over a TensorDataset with a literal batch size)."""
    iterable, target = loop.iter, loop.target
    if isinstance(iterable, ast.Call) and key_of(iterable.func) == "enumerate" and iterable.args:
        iterable = iterable.args[0]
        target = target.elts[1] if isinstance(target, ast.Tuple) and len(target.elts) == 2 else None  # type: ignore[assignment]
    if not isinstance(target, ast.Tuple) or not all(isinstance(e, ast.Name) for e in target.elts):
        return None
    position = [e.id for e in target.elts].index(name) if name in [e.id for e in target.elts] else None  # type: ignore[attr-defined]
    loader = single_value(ctx, iterable)
    if position is None or not isinstance(loader, ast.Call) or qual_last(ctx, loader) != "DataLoader":
        return None
    given = loader_argument(loader, "batch_size")
    batch = 1 if given is None else _int(given) if _int(given) is not None else BATCH if key_of(given) else None
    if batch is None:
        return None
    if any(loader_argument(loader, n) is not None for n in ("collate_fn", "batch_sampler")):
        return None
    dataset = single_value(ctx, loader_argument(loader, "dataset"))
    if not isinstance(dataset, ast.Call) or qual_last(ctx, dataset) != "TensorDataset" or len(dataset.args) != len(target.elts):
        return None
    tensor = shape(ctx, dataset.args[position], ctx.tree, 10**9, depth + 1)
    if not tensor:
        return None
    return (batch if batch == BATCH else min(batch, tensor[0]),) + tensor[1:]


def _matmul(a: Shape | None, b: Shape | None) -> Shape | None:
    if a is None or b is None or not a or not b or a[-1] != b[0] or len(b) > 2:
        return None
    return a[:-1] + b[1:]


def _model_output(ctx: FileContext, node: ast.AST | None, cls: str, x: Shape | None) -> Shape | None:
    """A model's output shape: ``nn.Linear``, an ``nn.Sequential`` of Linear and element-wise layers, or a
    local module whose forward only chains such layers and ends in one."""
    if x is None or not x or not isinstance(node, ast.Call):
        return None
    if cls in ctx.classes:
        return _local_output(ctx, cls, x)
    layers = list(node.args) if cls == "Sequential" else [node] if cls == "Linear" else []
    if not layers:
        return None
    for layer in layers:
        if not isinstance(layer, ast.Call):
            return None
        name = qual_last(ctx, layer)
        if name == "Linear":
            size = layer.args[1] if len(layer.args) > 1 else kwarg(layer, "out_features")
            if not isinstance(size, ast.Constant) or type(size.value) is not int:
                return None
            x = x[:-1] + (size.value,)
        elif name not in _ELEMENTWISE:
            return None
    return x


_FUNCTIONS = {"relu", "gelu", "tanh", "sigmoid", "dropout", "leaky_relu", "silu", "softplus", "elu", "mish"}


def _local_output(ctx: FileContext, cls: str, x: Shape) -> Shape | None:
    """``forward`` of a local module that only chains ``self.<layer>(...)`` calls of Linear / element-wise layers
    (and element-wise functions) and returns a Linear's output: the input's shape with that Linear's width last."""
    forward = ctx.methods.get(cls, {}).get("forward")
    init = ctx.methods.get(cls, {}).get("__init__")
    if forward is None or init is None or len(x) < 2:
        return None
    layers: dict[str, ast.Call] = {}
    for node in walk(init):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Call):
            key = key_of(node.targets[0])
            if key is not None and key.startswith("self."):
                layers[key[5:]] = node.value
    for node in walk(forward):
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Attribute) and key_of(node.func.value) == "self":
            layer = layers.get(node.func.attr)
            if layer is None or _model_output(ctx, layer, qual_last(ctx, layer), x) is None:
                return None
        elif qual_last(ctx, node) not in _FUNCTIONS:
            return None
    returns = [n.value for n in walk(forward) if isinstance(n, ast.Return)]
    if len(returns) != 1 or not isinstance(returns[0], ast.Call) or not isinstance(returns[0].func, ast.Attribute):
        return None
    last = layers.get(returns[0].func.attr)
    return _model_output(ctx, last, qual_last(ctx, last), x) if last is not None else None
