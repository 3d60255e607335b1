"""Where the tensors of a training step live (TW403): DataLoaders that hand out their batches on the CPU, and models
that leave their inputs where they are and meet them with their parameters.

Each answer is a proof or nothing: a loader built by code the analysis cannot read, a ``collate_fn`` or a dataset
that may place tensors, a model class that moves what it is given, or an input the model only reads on the host
(lengths for ``pack_padded_sequence``, indices) all answer "not known", which silences the rule.
"""

from __future__ import annotations

import ast
import builtins

from trainwell.lint.context import (
    FileContext,
    key_of,
    kwarg,
    method_name,
    strip_identity,
)
from trainwell.lint.dataflow import Element, definitions
from trainwell.lint.roles import TORCHVISION_BY_NAME
from trainwell.lint.rules._data import loader_argument
from trainwell.lint.syntax import walk

MOVES = {"to", "cuda"}
WRAPPERS_THAT_MOVE = {"DataParallel", "DistributedDataParallel", "DDP"}  # they scatter the inputs to their devices
_BUILTINS = set(dir(builtins))
_HOST_METHODS = {"tolist", "item", "cpu", "numpy", "size", "dim", "numel", "__len__"}  # a host value, on no device
_HOST_FUNCTIONS = {"len", "int", "float", "bool", "str", "range", "isinstance", "type", "print", "id", "hash"}
_PACKING = {"pack_padded_sequence", "pack_sequence"}
_METADATA = {"shape", "device", "dtype", "ndim", "is_cuda", "requires_grad"}
# torch.nn layers that hold parameters or buffers: an input on another device fails there
_PARAMETER_LAYERS = {"Linear", "Bilinear", "LazyLinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
                     "ConvTranspose3d", "LazyConv1d", "LazyConv2d", "LazyConv3d", "Embedding", "EmbeddingBag", "RNN", "LSTM",
                     "GRU", "RNNCell", "LSTMCell", "GRUCell", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm",
                     "MultiheadAttention", "Transformer", "TransformerEncoder", "TransformerDecoder",
                     "TransformerEncoderLayer", "TransformerDecoderLayer", "PReLU"}
_CONTAINERS = {"Sequential", "ModuleList"}
_FACTORIES = {"zeros", "ones", "empty", "full", "arange", "randn", "rand", "randint", "eye", "linspace", "zeros_like", "ones_like",
              "empty_like", "full_like", "randn_like", "rand_like"}


# -- loaders -----------------------------------------------------------------------------
def cpu_loaders(ctx: FileContext, keys: set[str | None]) -> bool:
    """Whether every key is a DataLoader the analysis can read (built in the file, or returned by a function of the
    project) that hands out its batches on the CPU."""
    return bool(keys) and all(key is not None and cpu_loader(ctx, key) for key in keys)


def cpu_loader(ctx: FileContext, key: str) -> bool:
    found = loader_call(ctx, key)
    if found is None:
        return False  # not a DataLoader we can see: the data may already be on the device
    home, call, scope = found
    if _may_pass(home, call, ("pin_memory_device",)):
        return False
    collate = kwarg(call, "collate_fn") or loader_argument(call, "collate_fn")
    if collate is None and _may_pass(home, call, ("collate_fn",)):
        return False  # in a `**kwargs` spread we cannot read
    if collate is not None and not _collate_places_nothing(home, scope, collate):
        return False
    dataset = loader_argument(call, "dataset")
    return dataset is not None and not _places(home, scope, dataset, 0)


def loader_call(ctx: FileContext, key: str) -> tuple[FileContext, ast.Call, ast.AST] | None:
    """The ``DataLoader(...)`` call that ``key`` holds, with its file and the function (or module) it is in: a loader
    built in this file and never rebuilt or wrapped, or the one loader a function of the project builds and returns
    (``loader = get_loader(root, vocab, ...)``)."""
    assigns = [a for a in ctx.assigns if any(key_of(t) == key for target in a.targets
                                             for t in (target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]))]
    role = ctx.roles.get(key)
    if role is not None:
        if role.kind != "loader" or not isinstance(role.node, ast.Call) or any(a.value is not role.node for a in assigns):
            return None  # also rebuilt or wrapped (`loader, model = accelerator.prepare(loader, model)`): it may place the batches
        return ctx, role.node, ctx.scope_of(role.node)
    if len(assigns) != 1 or len(assigns[0].targets) != 1 or key_of(assigns[0].targets[0]) != key:
        return None
    return _returned_loader(ctx, assigns[0].value, 0)


def _returned_loader(ctx: FileContext, value: ast.expr, depth: int) -> tuple[FileContext, ast.Call, ast.AST] | None:
    """The one DataLoader that a call of a function of the file or of the project returns on every path."""
    if not isinstance(value, ast.Call) or depth > 3:
        return None
    name = key_of(value.func)
    fn = ctx.functions.get(name or "") or ctx.nested_functions.get(name or "")
    home: FileContext = ctx
    if fn is None and ctx.project is not None:
        found = ctx.project.function(ctx, value.func)
        if found is not None:
            home, fn = found
    if fn is None:
        return None
    loaders = []
    for ret in (n for n in home.members(fn) if isinstance(n, ast.Return)):
        made = [ret.value]
        if isinstance(ret.value, ast.Name):
            made = [v for _, v in definitions(home, fn).get(ret.value.id, [])]
        for v in made:
            if isinstance(v, ast.Call) and (home.call_name(v) or "").startswith("torch") and (home.call_name(v) or "").endswith(".DataLoader"):
                loaders.append((home, v, fn))
            elif isinstance(v, ast.Call) and (inner := _returned_loader(home, v, depth + 1)) is not None:
                loaders.append(inner)
            else:
                return None
    return loaders[0] if loaders and all(found[1] is loaders[0][1] for found in loaders) else None


def _collate_places_nothing(ctx: FileContext, scope: ast.AST, collate: ast.expr) -> bool:
    """Whether the ``collate_fn`` leaves the batch on the CPU: torch's own, or a function (or lambda) of the project
    whose code moves nothing and calls only what the analysis can read."""
    if isinstance(collate, ast.Lambda):
        return _code_places_nothing(ctx, collate, 0)
    if isinstance(collate, ast.Name) and isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) \
            and collate.id in {a.arg for a in scope.args.args + scope.args.kwonlyargs}:
        return False  # whatever the caller passes
    found = _function(ctx, collate)
    if found is not None:
        return _code_places_nothing(found[0], found[1], 0)
    return (ctx.qualname(collate) or "").startswith("torch.utils.data")  # `default_collate`


def _function(ctx: FileContext, func: ast.expr) -> tuple[FileContext, ast.AST] | None:
    name = key_of(func)
    fn = ctx.functions.get(name or "") or ctx.nested_functions.get(name or "")
    if fn is not None:
        return ctx, fn
    if ctx.project is not None and isinstance(func, (ast.Name, ast.Attribute)):
        return ctx.project.function(ctx, func)
    return None


def _code_places_nothing(ctx: FileContext, code: ast.AST, depth: int) -> bool:
    if depth > 3:
        return False
    for node in walk(code):
        if not isinstance(node, ast.Call):
            continue
        if method_name(node) in MOVES or kwarg(node, "device") is not None:
            return False
        qual = ctx.qualname(node.func) or ""
        if qual.startswith(("torch", "numpy")) or (isinstance(node.func, ast.Name) and node.func.id in _BUILTINS and not qual):
            continue
        if isinstance(node.func, ast.Attribute) and not qual:
            continue  # a method of a value (`data.sort(...)`, `batch.append(...)`)
        found = _function(ctx, node.func)
        if found is None or not _code_places_nothing(found[0], found[1], depth + 1):
            return False  # a callable we cannot read may put tensors on a device
    return True


def _may_pass(ctx: FileContext, call: ast.Call, names: tuple[str, ...]) -> bool:
    """Whether ``call`` may receive one of the keyword arguments ``names``: written out, or in a ``**kwargs`` spread
    that is not made of dict literals of the file without them (``kw = {...}``, ``kw.update(other)``)."""
    for keyword in call.keywords:
        if keyword.arg in names or (keyword.arg is None and _may_hold(ctx, keyword.value, names, 0)):
            return True
    return False


def _may_hold(ctx: FileContext, value: ast.expr, names: tuple[str, ...], depth: int) -> bool:
    if isinstance(value, ast.IfExp):
        return _may_hold(ctx, value.body, names, depth) or _may_hold(ctx, value.orelse, names, depth)
    if isinstance(value, ast.Dict):
        return any(k is None or not isinstance(k, ast.Constant) or k.value in names for k in value.keys)
    spread = key_of(value) if isinstance(value, ast.Name) else None
    if spread is None or depth > 3:
        return True
    values: list[ast.expr] = [a.value for a in ctx.assigns if len(a.targets) == 1 and key_of(a.targets[0]) == spread]
    for node in ctx.calls:
        if isinstance(node.func, ast.Attribute) and key_of(node.func.value) == spread and node.func.attr != "get":
            if node.func.attr != "update" or len(node.args) != 1 or node.keywords:
                return True  # `kw["collate_fn"] = ...` spelled as a call, `kw.setdefault(...)`, `kw.update(a=...)`
            values.append(node.args[0])
    if any(isinstance(t, ast.Subscript) and key_of(t.value) == spread for a in ctx.assigns for t in a.targets):
        return True
    return not values or any(_may_hold(ctx, v, names, depth + 1) for v in values)


def _places(ctx: FileContext, scope: ast.AST, expr: ast.expr, depth: int) -> bool:
    """Whether building ``expr`` (a dataset) may put tensors on a device: a ``.to()`` / ``.cuda()`` or a ``device=``
    on the way, or a dataset class or factory function of the project that moves tensors."""
    if depth > 3:
        return True
    for node in walk(expr):
        if isinstance(node, ast.Call):
            if method_name(node) in MOVES or kwarg(node, "device") is not None:
                return True
            name = key_of(node.func) or ""
            code: ast.AST | None = ctx.classes.get(name) or ctx.functions.get(name)  # a dataset class or a factory
            if code is None and ctx.project is not None and isinstance(node.func, (ast.Name, ast.Attribute)) \
                    and not (ctx.call_name(node) or "").startswith(("torch", "numpy", "builtins")):
                found = ctx.project.class_def(ctx, node.func) if name.rpartition(".")[2][:1].isupper() else ctx.project.function(ctx, node.func)
                code = found[1] if found is not None else None  # type: ignore[assignment]
            if code is not None and _moves_tensors(code):
                return True
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if any(_places(ctx, scope, v, depth + 1) for v in _assigned(ctx, scope, node.id)):
                return True
    return False


def _assigned(ctx: FileContext, scope: ast.AST, name: str) -> list[ast.expr]:
    """The values assigned to ``name`` in ``scope`` (else at module level, where a global comes from): for
    ``X, Y = a.to(d), b`` the element of X."""
    found = definitions(ctx, scope).get(name) or definitions(ctx, ctx.tree).get(name) or []
    values = []
    for _, value in found:
        value = value.value if isinstance(value, (Element, ast.AugAssign)) else value.iter if isinstance(value, (ast.For, ast.AsyncFor)) else value
        if isinstance(value, ast.expr):
            values.append(value)
    return values


def _moves_tensors(code: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and (method_name(n) in MOVES or kwarg(n, "device") is not None) for n in walk(code))


# -- models ------------------------------------------------------------------------------
def meets_parameters(ctx: FileContext, key: str | None, index: int) -> bool:
    """Whether the model under ``key`` leaves its inputs where they are and uses its ``index``-th positional input
    with its parameters, so that an input on another device fails: a torch or torchvision module built here, or a
    module class of the project whose code moves no input and whose ``forward`` passes that input (through reshapes,
    indexing, arithmetic) to a layer with parameters. Not when wrapped in ``DataParallel`` /
    ``DistributedDataParallel`` (they scatter the inputs to the devices)."""
    memo = ctx.__dict__.setdefault("_meets_parameters", {})  # (key, index) -> answer: asked for each input of every forward event
    if (key, index) not in memo:
        memo[(key, index)] = _meets_parameters(ctx, key, index)
    return memo[(key, index)]


def _meets_parameters(ctx: FileContext, key: str | None, index: int) -> bool:
    role = ctx.role(key)
    if role is not None and role.node is None:  # known from usage only: follow `self.model = model.to(device)`
        sources = [ctx.role(key_of(strip_identity(a.value))) for a in ctx.assigns if len(a.targets) == 1 and key_of(a.targets[0]) == key]
        role = sources[0] if len(sources) == 1 else None
    if role is None or role.kind != "model" or not isinstance(role.node, ast.Call):
        return False
    if wrappers(ctx, key) and bare_move(ctx, key) is None:
        return False
    qual = ctx.call_name(role.node) or ""
    if qual.startswith(("torch.nn.", "torchvision.models.")) or (role.cls == TORCHVISION_BY_NAME and index == 0):
        return True  # a torchvision classifier picked by name meets its image with its first convolution
    home = ctx if role.cls in ctx.classes else role.info.get("home")
    return home is not None and role.cls in home.classes and _input_meets(home, role.cls, index, 0)


def wrappers(ctx: FileContext, key: str | None) -> list[ast.Call]:
    """The calls that wrap the model (or a part of it: ``model.features = DataParallel(model.features)``) in a
    ``DataParallel`` / ``DistributedDataParallel``, which scatter the inputs to the model's devices."""
    cache = ctx.__dict__.setdefault("_tw403_wrappers", {})
    if key not in cache:
        cache[key] = [n for n in ctx.calls if n.args and _named_like_a_wrapper(n)
                      and (ctx.call_name(n) or key_of(n.func) or "").rsplit(".", 1)[-1] in WRAPPERS_THAT_MOVE
                      and any((k := key_of(strip_identity(a))) is not None and (k == key or k.startswith(f"{key}.")) for a in n.args)]
    return cache[key]


def _named_like_a_wrapper(call: ast.Call) -> bool:
    """A cheap first look: the callee's own name (an import may rename it: ``from torch.nn.parallel import
    DistributedDataParallel as DDP`` is in WRAPPERS_THAT_MOVE too, anything else is read through call_name)."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name in WRAPPERS_THAT_MOVE or isinstance(func, ast.Name)


def bare_move(ctx: FileContext, key: str | None) -> ast.stmt | None:
    """A statement that moves the model to a device on a path where no wrapper of :func:`wrappers` holds it: every
    wrapper call sits in another branch of an ``if`` that holds the move (``elif args.gpu is not None: model =
    model.cuda(args.gpu)`` beside ``if args.distributed: ... DistributedDataParallel(model, ...)``). None when there is
    none (a wrapper may follow the move on the same path, or sit in another function)."""
    cache = ctx.__dict__.setdefault("_tw403_bare_moves", {})
    if key not in cache:
        cache[key] = _bare_move(ctx, key)
    return cache[key]


def _bare_move(ctx: FileContext, key: str | None) -> ast.stmt | None:
    found = wrappers(ctx, key)
    for stmt in (n for n in ctx.nodes if isinstance(n, (ast.Assign, ast.Expr)) and isinstance(n.value, ast.Call)):
        call = stmt.value
        moved = key_of(stmt.targets[0]) if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else key_of(getattr(call.func, "value", None))
        if method_name(call) not in MOVES or moved != key or any(n is w for n in walk(call) for w in found):
            continue
        if all(_apart(ctx, stmt, w) for w in found):
            return stmt
    return None


def _apart(ctx: FileContext, a: ast.AST, b: ast.AST) -> bool:
    """Whether ``a`` and ``b`` sit in different branches of one ``if`` of the same function: one run reaches one of them."""
    if ctx.scope_of(a) is not ctx.scope_of(b):
        return False
    for node in ctx.scope_members.get(id(ctx.scope_of(a)), []):
        if isinstance(node, ast.If):
            body = {id(n) for stmt in node.body for n in walk(stmt)}
            orelse = {id(n) for stmt in node.orelse for n in walk(stmt)}
            if (id(a) in body and id(b) in orelse) or (id(a) in orelse and id(b) in body):
                return True
    return False


def _input_meets(ctx: FileContext, cls: str, index: int, depth: int) -> bool:
    """Whether the class's ``forward`` takes its ``index``-th input to a layer with parameters, and nothing in the
    class moves an input (a move of a tensor it builds itself, ``torch.zeros(n).to(device)``, moves none)."""
    memo = ctx.__dict__.setdefault("_input_meets", {})  # a class of a helper file is asked again from each file that builds it
    if (cls, index, depth) not in memo:
        memo[(cls, index, depth)] = _class_input_meets(ctx, cls, index, depth)
    return memo[(cls, index, depth)]


def _class_input_meets(ctx: FileContext, cls: str, index: int, depth: int) -> bool:
    node = ctx.classes.get(cls)
    if node is None or depth > 3 or _moves_inputs(ctx, node):
        return False
    forward = ctx.methods.get(cls, {}).get("forward")
    if forward is None:
        return False
    params = [a.arg for a in forward.args.posonlyargs + forward.args.args][1:]
    if index >= len(params):
        return False
    return _flows_to_parameters(ctx, cls, forward, {params[index]}, depth)


def _moves_inputs(ctx: FileContext, cls: ast.ClassDef) -> bool:
    for node in walk(cls):
        if isinstance(node, ast.Call) and method_name(node) in MOVES and not _fresh_tensor(ctx, node.func.value):  # type: ignore[attr-defined]
            return True
    return False


def _fresh_tensor(ctx: FileContext, node: ast.expr) -> bool:
    """``torch.zeros(b, n)``, ``torch.arange(n).long()``: a tensor built on the spot from sizes, not one the module
    was given (``torch.stack(xs)`` is made of inputs)."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Call):
        node = node.func.value
    qual = ctx.call_name(node) or "" if isinstance(node, ast.Call) else ""
    head, _, last = qual.rpartition(".")
    return head == "torch" and last in _FACTORIES


def _flows_to_parameters(ctx: FileContext, cls: str, fn: ast.AST, names: set[str], depth: int) -> bool:
    derived = set(names)
    members = ctx.members(fn)
    binders = sorted((n for n in members if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor))),
                     key=lambda n: n.lineno)  # type: ignore[attr-defined]
    for _ in range(2):  # twice: a value derived late in a loop body reaches the top of the next iteration
        for node in binders:
            value = node.iter if isinstance(node, (ast.For, ast.AsyncFor)) else node.value  # type: ignore[union-attr]
            if value is not None and _carries(value, derived):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]  # type: ignore[union-attr]
                derived |= {n.id for t in targets for n in walk(t) if isinstance(n, ast.Name)}
    methods = ctx.methods.get(cls, {})
    for call in (n for n in members if isinstance(n, ast.Call)):
        func = call.func
        if not (isinstance(func, ast.Attribute) and key_of(func.value) == "self"):
            continue
        carried = [i for i, a in enumerate(call.args) if _carries(a, derived)]
        if not carried and not any(_carries(k.value, derived) for k in call.keywords):
            continue
        if func.attr in methods:  # a helper method: follow the input into it
            helper = methods[func.attr]
            params = [a.arg for a in helper.args.posonlyargs + helper.args.args][1:]
            inner = {params[i] for i in carried if i < len(params)} | {k.arg for k in call.keywords if k.arg and _carries(k.value, derived)}
            if depth < 3 and inner and _flows_to_parameters(ctx, cls, helper, inner, depth + 1):
                return True
        elif _submodule_meets(ctx, cls, func.attr, carried, depth):
            return True
    return False


def _carries(node: ast.AST | None, derived: set[str]) -> bool:
    """Whether ``node`` is (a view, a part, a computation of) one of the tensors ``derived``, on their device."""
    if node is None:
        return False
    if isinstance(node, ast.Name):
        return node.id in derived
    if isinstance(node, ast.Subscript):
        return _carries(node.value, derived)  # the index's device does not matter (a CUDA tensor takes CPU indices)
    if isinstance(node, ast.Attribute):
        return node.attr not in _METADATA and _carries(node.value, derived)
    if isinstance(node, ast.Call):
        if method_name(node) in _HOST_METHODS or isinstance(node.func, ast.Name) and node.func.id in _HOST_FUNCTIONS:
            return False
        if key_of(node.func) is not None and key_of(node.func).rsplit(".", 1)[-1] in _PACKING and node.args:  # type: ignore[union-attr]
            return _carries(node.args[0], derived)  # the lengths stay on the host (PyTorch wants them there)
        receiver = node.func.value if isinstance(node.func, ast.Attribute) and key_of(node.func.value) != "self" else None
        return _carries(receiver, derived) or any(_carries(a, derived) for a in [*node.args, *(k.value for k in node.keywords)])
    if isinstance(node, (ast.Lambda, ast.FunctionDef)):
        return False
    return any(_carries(child, derived) for child in ast.iter_child_nodes(node))


def _submodule_meets(ctx: FileContext, cls: str, attr: str, carried: list[int], depth: int) -> bool:
    """Whether ``self.<attr>``, called with the input at the positions ``carried``, is a layer with parameters: every
    value the class assigns to it is one."""
    values = [n.value for m in ctx.methods.get(cls, {}).values() for n in walk(m)
              if isinstance(n, ast.Assign) and any(key_of(t) == f"self.{attr}" for t in n.targets)]
    init = ctx.methods.get(cls, {}).get("__init__")
    return bool(values) and init is not None and all(_has_parameters(ctx, init, v, carried, depth) for v in values)


def _has_parameters(ctx: FileContext, init: ast.AST, value: ast.expr, carried: list[int], depth: int) -> bool:
    value = strip_identity(value)
    if isinstance(value, (ast.Starred, ast.Subscript)):
        return _has_parameters(ctx, init, value.value, carried, depth)
    if isinstance(value, ast.Name):
        found = definitions(ctx, init).get(value.id, [])
        return len(found) == 1 and isinstance(found[0][1], ast.expr) and _has_parameters(ctx, init, found[0][1], carried, depth)
    if not isinstance(value, ast.Call):
        return False
    qual = ctx.call_name(value) or ""
    last = qual.rsplit(".", 1)[-1]
    if qual.startswith("torchvision.models."):
        return 0 in carried
    if qual.startswith("torch.nn.") and last in _PARAMETER_LAYERS:
        return bool(carried)
    if qual.startswith("torch.nn.") and last in _CONTAINERS:
        return 0 in carried and any(_has_parameters(ctx, init, a, [0], depth) for a in value.args)
    if isinstance(value.func, ast.Attribute) and value.func.attr in ("children", "modules"):
        return _has_parameters(ctx, init, value.func.value, carried, depth)  # `list(resnet.children())[:-1]`
    if isinstance(value.func, ast.Name) and value.func.id in ("list", "tuple") and len(value.args) == 1:
        return _has_parameters(ctx, init, value.args[0], carried, depth)
    name = key_of(value.func)
    if name in ctx.classes and ctx.is_module_class(name):
        return any(_input_meets(ctx, name, i, depth + 1) for i in carried)
    found = ctx.project.module_class(ctx, value.func) if ctx.project is not None else None
    return found is not None and any(_input_meets(found[0], found[1], i, depth + 1) for i in carried)
