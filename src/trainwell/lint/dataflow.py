"""Where a value comes from: the assignments that reach a name, and whether a tensor keeps its graph.

Deliberately simple: within one function (or the module body), the latest
assignment above the use wins; branches are not told apart. That is enough for
training code, where the loss is built a few lines above ``backward()``.
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Callable

from trainwell.lint.context import FileContext, key_of, kwarg, walk
from trainwell.lint.events import Event, Site, grad_of, unwrap_iter

CUTS = {"detach", "item", "tolist", "numpy", "cpu_numpy"}
_METADATA = {"shape", "dtype", "device", "grad", "requires_grad", "is_cuda", "ndim", "grad_fn", "names", "layout"}
_NO_GRAD_METHODS = {"argmax", "argmin", "argsort", "eq", "ne", "gt", "lt", "ge", "le", "long", "int", "bool", "size",
                    "numel", "dim", "nonzero", "isnan", "isinf", "isfinite", "sign", "round", "floor", "ceil"}
_NO_GRAD_FUNCTIONS = _NO_GRAD_METHODS | {"no_grad", "randn", "rand", "zeros", "ones", "empty", "full", "arange", "randint",
                                        "randperm", "zeros_like", "ones_like", "randn_like", "rand_like", "empty_like", "tensor",
                                        "as_tensor", "from_numpy", "device", "manual_seed", "is_tensor", "numel"}
_GRAPH_BUILTINS = {"sum", "max", "min", "abs", "pow"}
_BUILTINS = set(dir(__import__("builtins")))
_REWRAP = {"tensor", "as_tensor", "from_numpy", "scalar_tensor"}
# torch functions that build new values from a shape alone: nothing of their arguments' values flows into them
_FACTORIES = {"randn", "rand", "zeros", "ones", "empty", "arange", "randint", "randperm", "zeros_like", "ones_like",
              "randn_like", "rand_like", "empty_like", "eye", "linspace"}
# tensor methods whose result holds the receiver's values (moved, copied, cast): it comes from where the receiver came
_MOVES = {"to", "cuda", "cpu", "type", "clone", "contiguous", "requires_grad_", "float", "half", "double", "bfloat16"}
_INTEGER_TENSORS = {"LongTensor", "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"}
# libraries whose values never carry an autograd graph, and torch's namespaces that build modules, not data
_DATA_MODULES = ("numpy", "math", "random", "pandas", "torch.utils.data", "torchvision.datasets", "torchvision.transforms",
                 "torchtext", "datasets", "argparse")
_MODULE_MAKERS = ("torch.nn.parallel", "torch.nn.modules", "torch.nn.Module", "torch.optim", "torch.hub", "torch.jit", "torch.compile", "torch.load",
                  "torchvision.models", "torch.autograd.grad", "torch.func")
_DATA_BUILTINS = {"next", "iter", "len", "int", "float", "bool", "str", "range", "list", "tuple", "zip", "enumerate",
                  "sorted", "reversed", "min", "max", "abs", "round", "dict", "set"}


def _module_maker(qual: str) -> bool:
    """A torch name that gives a module, an optimizer or a loaded object, not data: ``torch.nn.Linear``, ``torch.load``
    (``torch.nn.functional.one_hot`` and ``torch.nn.utils.rnn.pack_padded_sequence`` compute data)."""
    if qual.startswith("torch.nn.") and qual.rsplit(".", 1)[-1][:1].isupper() and "." not in qual[len("torch.nn."):]:
        return True
    return qual.startswith(_MODULE_MAKERS)


def scope_nodes(ctx: FileContext, scope: ast.AST) -> list[ast.AST]:
    """Every node of ``scope``'s own body (a function's or the module's), not inside nested functions or classes."""
    return ctx.members(scope)


def definitions(ctx: FileContext, scope: ast.AST) -> dict[str, list[tuple[int, ast.AST]]]:
    """name -> [(line, value expression or the assigning statement)], sorted by line; cached per scope."""
    cache = ctx.__dict__.setdefault("_definitions", {})
    if id(scope) in cache:
        return cache[id(scope)]
    found: dict[str, list[tuple[int, ast.AST]]] = {}
    for node in ctx.members_of(scope, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor, ast.NamedExpr):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                _bind(found, target, node.value, node.lineno)
        elif isinstance(node, (ast.AnnAssign,)) and node.value is not None:
            _bind(found, node.target, node.value, node.lineno)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            found.setdefault(node.target.id, []).append((node.lineno, node))
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            _bind(found, node.target, node, node.lineno)
        elif isinstance(node, ast.NamedExpr):
            found.setdefault(node.target.id, []).append((node.lineno, node.value))
    for values in found.values():
        values.sort(key=lambda item: item[0])
    cache[id(scope)] = found
    return found


class Element(ast.AST):
    """The ``index``-th item of ``value`` when a tuple target unpacks it (``output, loss = train(x)``)."""

    _fields = ("value",)

    def __init__(self, value: ast.AST, index: int) -> None:
        super().__init__()
        self.value, self.index = value, index
        self.lineno = getattr(value, "lineno", 0)


def _bind(found: dict[str, list[tuple[int, ast.AST]]], target: ast.AST, value: ast.AST, line: int) -> None:
    if isinstance(target, ast.Name):
        found.setdefault(target.id, []).append((line, value))
    elif isinstance(target, (ast.Tuple, ast.List)):
        values = value.elts if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) else None
        for index, element in enumerate(target.elts):
            # `output, loss = step(...)`: each name is one element of the value, not the whole of it
            _bind(found, element, values[index] if values is not None else (value if isinstance(value, (ast.For, ast.AsyncFor)) else Element(value, index)), line)


def reaching(ctx: FileContext, scope: ast.AST, name: str, line: int) -> list[ast.AST]:
    """The values assigned to ``name`` that reach ``line``: the latest plain assignment and the augmented ones after it."""
    values = definitions(ctx, scope).get(name)
    if not values:
        return []
    lines = _definition_lines(ctx, scope, name, values)
    out: list[ast.AST] = []
    for index in range(bisect.bisect_left(lines, line) - 1, -1, -1):  # the assignments above ``line``, latest first
        value = values[index][1]
        out.append(value)
        if not isinstance(value, ast.AugAssign):
            break
    return out


def _definition_lines(ctx: FileContext, scope: ast.AST, name: str, values: list[tuple[int, ast.AST]]) -> list[int]:
    """The lines of ``name``'s assignments in ``scope`` (sorted, as :func:`definitions` keeps them), once per name: a
    script that reuses ``loss`` in many loops asks where each of its uses stands among all of them."""
    cache = ctx.__dict__.setdefault("_definition_lines", {})
    found = cache.get((id(scope), name))
    if found is None:
        found = cache[(id(scope), name)] = [def_line for def_line, _ in values]
    return found


def no_grad_nodes(ctx: FileContext) -> set[int]:
    """ids of the nodes that run with autograd off: inside ``with torch.no_grad()`` / ``inference_mode()`` blocks
    and in functions decorated with them (cached per file)."""
    cached = ctx.__dict__.get("_no_grad_nodes")
    if cached is not None:
        return cached
    found: set[int] = set()
    for node in ctx.nodes_of(ast.With, ast.AsyncWith, ast.FunctionDef, ast.AsyncFunctionDef):
        if isinstance(node, (ast.With, ast.AsyncWith)) and any(grad_of(ctx, item.context_expr) is False for item in node.items):
            body = node.body
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(grad_of(ctx, d) is False for d in node.decorator_list):
            body = node.body
        else:
            continue
        found.update(id(sub) for stmt in body for sub in walk(stmt))
    ctx.__dict__["_no_grad_nodes"] = found
    return found


def _backpropagated_names(ctx: FileContext, scope: ast.AST) -> dict[str, list[ast.Name]]:
    """name -> the names, at the places where ``scope`` backpropagates that name (``loss.backward()``, ``scaler.scale(loss).backward()``,
    ``accelerator.backward(loss)``, ``torch.autograd.backward(loss)``, ``self.manual_backward(loss)``); cached per scope."""
    cache = ctx.__dict__.setdefault("_backpropagated_names", {})
    if id(scope) in cache:
        return cache[id(scope)]
    found: dict[str, list[ast.Name]] = {}
    for node in scope_nodes(ctx, scope):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        receiver, name = node.func.value, node.func.attr
        if name == "backward" and not node.args and isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Attribute) \
                and receiver.func.attr == "scale" and len(receiver.args) == 1:
            tensor = receiver.args[0]
        elif name == "backward" and not node.args:
            tensor = receiver
        elif name == "manual_backward" or (name == "backward" and (ctx.qualname(node.func) == "torch.autograd.backward"
                                                                   or (key_of(receiver) or "").rsplit(".", 1)[-1] in ("accelerator", "fabric"))):
            tensor = node.args[0] if node.args else None
        else:
            continue
        if isinstance(tensor, ast.Name):
            found.setdefault(tensor.id, []).append(tensor)
    cache[id(scope)] = found
    return found


def backpropagated(ctx: FileContext, scope: ast.AST, use: ast.Name, values: list[ast.AST]) -> bool:
    """Whether ``scope`` calls ``backward()`` on the value of ``use`` that ``values`` (what reaches it) hold: the
    same assignment reaches the backward, so the use sees a tensor proven to carry an autograd graph. A backward
    of ``use`` itself is not evidence (TW108 asks whether that very backward has a graph)."""
    tensors = _backpropagated_names(ctx, scope).get(use.id)
    if not tensors:
        return False
    plain = next((v for v in values if not isinstance(v, ast.AugAssign)), None)
    if isinstance(plain, (ast.For, ast.AsyncFor)):
        return False
    counts, own = _backward_reaches(ctx, scope, use.id, tensors)
    reach = (id(plain), len(values))
    return counts.get(reach, 0) > (1 if own.get(id(use)) == reach else 0)  # a backward other than ``use`` itself


def _backward_reaches(ctx: FileContext, scope: ast.AST, name: str, tensors: list[ast.Name]) -> tuple[dict, dict]:
    """What reaches each backward of ``name`` in ``scope``, as (id of its plain assignment, how many assignments):
    how many backwards each such reach has, and each backward's own; once per name, not once per use."""
    cache = ctx.__dict__.setdefault("_backward_reaches", {})
    found = cache.get((id(scope), name))
    if found is None:
        counts: dict[tuple[int, int], int] = {}
        own: dict[int, tuple[int, int]] = {}
        for tensor in tensors:
            there = reaching(ctx, scope, name, tensor.lineno)
            reach = (id(next((v for v in there if not isinstance(v, ast.AugAssign)), None)), len(there))
            counts[reach] = counts.get(reach, 0) + 1
            own[id(tensor)] = reach
        found = cache[(id(scope), name)] = (counts, own)
    return found


def instance_methods(ctx: FileContext, receiver: ast.expr, name: str,
                     keep: Callable[[ast.Assign], bool] | None = None) -> list[tuple[FileContext, ast.AST]]:
    """The method ``name`` of each class ``receiver`` may be an instance of: every assignment of its key in the file
    (each one ``keep`` accepts, where given) builds an object of a class of the file or of the project that is not an
    ``nn.Module`` (``corpus = Corpus()``, a converter chosen in an ``if``). Empty when one of them builds anything
    else or its class lacks the method."""
    key = key_of(receiver)
    if key is None or key == "self":
        return []
    found: list[tuple[FileContext, ast.AST]] = []
    for home, cls in _instance_classes(ctx, key, keep):
        method = _method_of(home, cls, name, 0)
        if method is None:
            return []
        found.append((home, method))
    return found


def instance_attributes(ctx: FileContext, receiver: ast.expr, name: str) -> list[tuple[ast.AST, ast.expr]]:
    """(method, value) for every ``self.<name> = value`` of each class ``receiver`` may be an instance of (see
    :func:`instance_methods`); empty when one of those classes assigns it nowhere, or something else may set it
    (a store into ``receiver.<name>`` in this file)."""
    key = key_of(receiver)
    if key is None or key == "self" or any(key_of(t) == f"{key}.{name}" for a in ctx.assigns for t in a.targets):
        return []
    found: list[tuple[ast.AST, ast.expr]] = []
    for home, cls in _instance_classes(ctx, key):
        assigned = [(m, n.value) for m in home.methods.get(cls, {}).values() for n in walk(m)
                    if isinstance(n, ast.Assign) and any(key_of(t) == f"self.{name}" for t in n.targets)]
        if not assigned:
            return []
        found += assigned
    return found


def _instance_classes(ctx: FileContext, key: str, keep: Callable[[ast.Assign], bool] | None = None) -> list[tuple[FileContext, str]]:
    """The classes (not ``nn.Module``s) every assignment of ``key`` in the file builds an object of; empty when any
    assignment is anything else."""
    values = [a.value for a in ctx.assigns if len(a.targets) == 1 and key_of(a.targets[0]) == key and (keep is None or keep(a))]
    while any(isinstance(v, ast.IfExp) for v in values):  # `A(chars) if ctc else B(chars)`: either
        values = [b for v in values for b in ((v.body, v.orelse) if isinstance(v, ast.IfExp) else (v,))]
    found = []
    for value in values:
        cls = _class_of(ctx, value.func) if isinstance(value, ast.Call) else None
        if cls is None or cls[0].is_module_class(cls[1]):
            return []
        found.append(cls)
    return found


def _class_of(ctx: FileContext, func: ast.expr) -> tuple[FileContext, str] | None:
    name = key_of(func)
    if name in ctx.classes:
        return ctx, name  # type: ignore[return-value]
    found = ctx.project.class_def(ctx, func) if ctx.project is not None and name is not None else None
    return (found[0], found[1].name) if found is not None else None


def _method_of(ctx: FileContext, cls: str, name: str, depth: int) -> ast.AST | None:
    """The method ``name`` of class ``cls`` of ``ctx``, or of one of its bases of the same file."""
    if depth > 4 or cls not in ctx.methods:
        return None
    if name in ctx.methods[cls]:
        return ctx.methods[cls][name]
    return next((m for b in ctx.classes[cls].bases if (m := _method_of(ctx, key_of(b) or "", name, depth + 1)) is not None), None)


class _Lazy:
    """A caller's argument, asked whether it carries a graph only when the helper reads the parameter it binds: an
    argument the helper never uses for what it returns (``converter.encode(labels)`` builds a new tensor) cannot make
    the answer unknown."""

    __slots__ = ("ask", "ask_origin", "origin_value", "value")

    def __init__(self, ask, ask_origin=None) -> None:  # type: ignore[no-untyped-def]
        self.ask, self.value = ask, None
        self.ask_origin, self.origin_value = ask_origin, None  # (from a model's outputs?, unknown?) of the argument

    def __call__(self) -> bool:
        if self.value is None:
            self.value = False  # asked again while being answered: a cycle
            self.value = self.ask()
        return bool(self.value)

    def origin(self) -> tuple[bool, bool]:
        """Whether the argument is computed from a model's outputs through cuts too, and whether that is unknown."""
        if self.origin_value is None:
            self.origin_value = (False, True)  # a cycle: unknown
            self.origin_value = self.ask_origin() if self.ask_origin is not None else (self(), False)
        return self.origin_value


class Graph:
    """Does an expression carry an autograd graph back to a model? (``connected``), and was it cut on the way? (``cut``).

    ``connected`` is a proof, not a guess: True only when the value is traced to
    the output of a known model (or a known loss of such outputs) through
    operations that keep the graph. A callable the analysis cannot see (an
    import from outside the tree, a method of an object of unknown kind) proves
    nothing, so its result is not connected: it may be a number.
    """

    def __init__(self, ctx: FileContext, scope: ast.AST, line: int, bound: dict[str, bool | _Lazy] | None = None,
                 derived: bool = False, data_params: frozenset[str] = frozenset(), origin: bool = False) -> None:
        self.ctx, self.scope, self.line = ctx, scope, line
        # derived=True asks a weaker question: is the value computed from a model's outputs at all (a device
        # tensor, graph or not: `logits.argmax(1)`)? Host-sync checks need that, not the graph.
        # origin=True asks it through `.detach()`, `.data`, `.item()` and re-wraps too, and calls every name it cannot
        # trace unknown: what a tensor made to require grad again was made of (see _releafed).
        self.derived, self.origin = derived or origin, origin
        self._no_grad_methods = frozenset() if self.derived else _NO_GRAD_METHODS
        self._no_grad_functions = frozenset() if self.derived else _NO_GRAD_FUNCTIONS
        self.cut = False
        self.unknown = False  # a callable the analysis cannot see was on the way: "not connected" proves nothing
        # a tensor made to require grad on purpose, not from a model's outputs, is on the way (a test's input detached
        # and cloned to check gradients against: `x.detach().clone().requires_grad_()`): the backward reaches it
        self.leaf = False
        self.bound = bound or {}  # a helper's parameters -> whether the caller's argument was connected
        self.data_params = data_params  # a helper's parameters whose arguments were proven data (see _data)
        self._seen: set[tuple[str, int]] = set()

    def connected(self, node: ast.AST | None, depth: int = 0) -> bool:
        if node is None or depth > 12:
            self.unknown |= self.origin and node is not None
            return False
        if isinstance(node, ast.Attribute):
            if node.attr == "data" and self.origin:
                return self.connected(node.value, depth + 1)
            if node.attr == "grad" and self.origin:
                self.unknown = True  # a parameter's gradient: made by a model's backward
                return False
            if node.attr == "data":
                self.cut = True
                return False
            if node.attr in _METADATA:
                return False
            held = instance_attributes(self.ctx.home(node), node.value, node.attr)
            if held:  # `corpus.train` of `corpus = Corpus(path)`: what the class assigns to `self.train`
                found = [self._inside(method, value, depth) for method, value in held]
                return any(found)
            return self.connected(node.value, depth + 1)  # `out.logits`
        if isinstance(node, ast.Call):
            return self._call(node, depth)
        if isinstance(node, ast.Name):
            return self._name(node, depth)
        if isinstance(node, Element):
            return self._element(node, depth)
        if isinstance(node, (ast.Lambda, ast.Constant, ast.JoinedStr)) or isinstance(node, ast.Compare) and not self.derived:
            return False  # comparisons give tensors without a graph
        return any(self.connected(child, depth + 1) for child in ast.iter_child_nodes(node))

    def _name(self, node: ast.Name, depth: int) -> bool:
        if self.ctx.is_model(node.id):
            return False  # a module is not a tensor; its outputs are (see _call)
        if self.origin:
            return self._origin_name(node, depth)
        if (node.id, self.line) in self._seen:
            return False
        self._seen.add((node.id, self.line))
        values = reaching(self.ctx, self.scope, node.id, self.line)
        if backpropagated(self.ctx, self.scope, node, values):
            return True  # `backward()` is called on this very value elsewhere: it carries a graph, whatever built it
        if not values:
            found = self.bound.get(node.id, False)
            return found() if isinstance(found, _Lazy) else found
        result = False
        quiet = no_grad_nodes(self.ctx)
        for value in values:
            if id(value.value if isinstance(value, Element) else value) in quiet:
                continue  # computed under no_grad / inference_mode: no graph, wherever it is used later
            if isinstance(value, ast.AugAssign):
                result |= self.connected(value.value, depth + 1)
            elif not isinstance(value, (ast.For, ast.AsyncFor)):  # loop targets are data
                result |= self.connected(value, depth + 1)
        if not result and self._turned_on(node, values):
            self._releafed(node, depth)  # `x = z.detach().clone()`, then `x.requires_grad = True`
        return result

    def _element(self, node: Element, depth: int) -> bool:
        """One item of an unpacked value: read from a helper that returns a tuple, else unknown."""
        call = node.value
        if isinstance(call, ast.Call) and self._model_call(call):
            return True  # every output of a model's forward pass carries its graph (`recon, mu, logvar = model(x)`)
        helpers = self._helpers(call.func) if isinstance(call, ast.Call) else []
        if not helpers:
            if self._data(call):
                return False  # `inputs, labels = data` of a batch; `x, y = next(iter(loader))`
            self.unknown = True
            return False
        found = [self._element_of(helper, call, node.index, depth) for helper in helpers]  # each one: cut and unknown add up
        return any(found)

    def _element_of(self, helper: ast.AST, call: ast.Call, index: int, depth: int) -> bool:
        """Item ``index`` of what ``helper`` returns for ``call``: the item of each returned tuple, or of what the
        returned call of another helper returns (``return pad_sequences(seqs, lengths, labels)``)."""
        params = [a.arg for a in helper.args.posonlyargs + helper.args.args]  # type: ignore[attr-defined]
        if params and params[0] == "self" and isinstance(call.func, ast.Attribute):
            params = params[1:]
        bound = {p: self._lazy(a, depth) for p, a in zip(params, call.args) if not isinstance(a, ast.Starred)}
        inner = Graph(self.ctx, helper, 10**9, bound, self.derived, self._data_params(params, call, depth + 1, helper), self.origin)
        inner._seen = self._seen
        found = False
        for ret in (n.value for n in scope_nodes(self.ctx, helper) if isinstance(n, ast.Return)):
            if isinstance(ret, ast.Tuple) and len(ret.elts) > index:
                found |= inner.connected(ret.elts[index], depth + 1)
            elif isinstance(ret, ast.Call) and depth < 12:
                found |= inner._element(Element(ret, index), depth + 1)
            else:
                inner.unknown = True
        self.cut |= inner.cut
        self.leaf |= inner.leaf
        self.unknown |= inner.unknown or not any(isinstance(n, ast.Return) for n in scope_nodes(self.ctx, helper))
        return found

    def _helper(self, func: ast.expr) -> ast.AST | None:
        """A function whose returns the analysis can read: of this file, or of another file of the project."""
        found = self._helpers(func)
        return found[0] if len(found) == 1 else None

    def _helpers(self, func: ast.expr) -> list[ast.AST]:
        """The functions a call may run whose returns the analysis can read: a function of this file or of another
        file of the project, a method of ``self``, or the method of each class the receiver may be an instance of
        (``converter.encode(labels)`` after ``converter = AttnLabelConverter(chars)`` in one branch and
        ``CTCLabelConverter(chars)`` in another). Empty when any of them is unknown."""
        home = self.ctx.home(func)
        if isinstance(func, ast.Name) and (func.id in home.functions or func.id in home.nested_functions):
            return [home.functions.get(func.id) or home.nested_functions[func.id]]
        if isinstance(func, ast.Attribute) and key_of(func.value) == "self":
            method = next((ms[func.attr] for ms in home.methods.values() if func.attr in ms), None)
            return [method] if method is not None else []
        if isinstance(func, ast.Attribute) and (methods := instance_methods(home, func.value, func.attr)):
            return [m for _, m in methods]
        found = self.ctx.project.function(home, func) if self.ctx.project is not None else None
        return [found[1]] if found is not None else []

    def _call(self, call: ast.Call, depth: int) -> bool:
        func = call.func
        args = [*call.args, *(k.value for k in call.keywords)]
        if self.origin and (found := self._origin_call(call, depth)) is not None:
            return found
        if not self.origin and requires_grad_on(self.ctx, call):
            self._releafed(call, depth)
        if isinstance(func, ast.Attribute) and func.attr in CUTS:
            self.cut = True
            return False
        qual = self.ctx.call_name(call) or ""
        last = qual.rsplit(".", 1)[-1]
        if qual.startswith("torch") and last in _INTEGER_TENSORS:
            return False  # `torch.LongTensor(ids)`: an integer tensor never carries a graph, whatever it is made of
        if last in _REWRAP and qual.startswith("torch") or (isinstance(func, ast.Name) and func.id in ("float", "int")):
            # a new tensor: it cuts the graph only when it wraps a value that had one (`torch.tensor(loss.item())`)
            cut_before = self.cut
            self.cut = False
            wrapped = any(self.connected(a, depth + 1) for a in call.args)
            self.cut = cut_before or wrapped or self.cut
            return False
        if self._model_call(call):
            return True
        role = self.ctx.role(key_of(func))
        if role is not None and role.kind == "loss" or qual.startswith("torch"):
            return last not in self._no_grad_functions and any(self.connected(a, depth + 1) for a in args)
        helpers = self._helpers(func)
        if helpers:
            found = [self._through(helper, call, depth) for helper in helpers]  # each one: cut and unknown add up
            return any(found)
        if isinstance(func, ast.Name) and func.id in _BUILTINS:
            return func.id in _GRAPH_BUILTINS and any(self.connected(a, depth + 1) for a in args)
        if isinstance(func, ast.Attribute) and not qual:
            # a method of a tensor keeps its graph; a method of an object of unknown kind proves nothing
            cut_before = self.cut
            if self.connected(func.value, depth + 1):
                return func.attr not in self._no_grad_methods
            if self.cut != cut_before:
                return False  # a method of a detached tensor (`.detach().requires_grad_()`): known, and cut
            if self._data(func.value):
                return any(self.connected(a, depth + 1) for a in args)  # `losses.mean()`, `target.to(device)` of a batch
        if self._data(call):
            return False  # `np.cos(t)`, `Tensor(n, 1)` of `Tensor = torch.cuda.FloatTensor`: data, no graph
        self.unknown = True
        return False

    def _data_params(self, params: list[str], call: ast.Call, depth: int, helper: ast.AST | None = None) -> frozenset[str]:
        """The parameters of a helper that ``call`` passes data (see :meth:`_data`), and those it leaves at a default
        that is data (``def get_data(self, path, batch_size=20)`` called as ``corpus.get_data(path)``); ``depth``
        bounds the walk through helpers that call each other (or themselves, through a loop-carried value)."""
        names = {p for p, a in zip(params, call.args) if not isinstance(a, ast.Starred) and self._data(a, depth)}
        names |= {k.arg for k in call.keywords if k.arg and self._data(k.value, depth)}
        arguments = getattr(helper, "args", None)
        if arguments is not None and not any(isinstance(a, ast.Starred) for a in call.args) and all(k.arg for k in call.keywords):
            positional = [a.arg for a in arguments.posonlyargs + arguments.args]
            defaults = dict(zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults))
            defaults.update({a.arg: d for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is not None})
            given = set(params[:len(call.args)]) | {k.arg for k in call.keywords}
            names |= {p for p, d in defaults.items() if p not in given and isinstance(d, ast.Constant)}
        return frozenset(names)

    def _data(self, node: ast.AST | None, depth: int = 0) -> bool:
        """Whether ``node`` is proven to be data: a value with no autograd graph and no module behind it, built only
        from constants, numpy, torch's tensor constructors, a batch of a DataLoader (``for x, y in loader``,
        ``next(iter(loader))``) and tensor operations on those (``y.to(device)``, ``x.view(x.size(0), -1)``). A name
        of unknown origin, an attribute of ``self`` or the call of an unknown callable is not data: it may hold a
        model, or a tensor with a graph."""
        if node is None or depth > 32:
            return False
        memo = self.__dict__.setdefault("_data_memo", {})  # per node: linear on long chains, and a cycle answers False
        if id(node) in memo:
            return memo[id(node)][1]
        memo[id(node)] = (node, False)  # the node is kept, so that its id is never reused for another one
        found = self._data_uncached(node, depth)
        memo[id(node)] = (node, found)
        return found

    def _data_uncached(self, node: ast.AST, depth: int) -> bool:
        more = depth + 1
        if isinstance(node, (ast.Constant, ast.Compare, ast.JoinedStr)):
            return True  # comparisons give tensors without a graph
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return all(self._data(e, more) for e in node.elts)
        if isinstance(node, ast.Dict):
            return all(self._data(v, more) for v in node.values)
        if isinstance(node, ast.BinOp):
            return self._data(node.left, more) and self._data(node.right, more)
        if isinstance(node, ast.UnaryOp):
            return self._data(node.operand, more)
        if isinstance(node, ast.BoolOp):
            return all(self._data(v, more) for v in node.values)
        if isinstance(node, ast.IfExp):
            return self._data(node.body, more) and self._data(node.orelse, more)
        if isinstance(node, ast.Subscript):
            return self._data(node.value, more)
        if isinstance(node, Element):
            return self._data_returns(node.value, more, node.index) if isinstance(node.value, ast.Call) else self._data(node.value, more)
        qual = self.ctx.qualname(node) or ""
        if isinstance(node, (ast.Name, ast.Attribute)) and qual.startswith(_DATA_MODULES + ("torch",)) and not _module_maker(qual):
            return True  # `torch.float32`, `torch.cuda.FloatTensor`, `np.pi`: not a module, not a graph
        if isinstance(node, ast.Attribute):
            held = instance_attributes(self.ctx.home(node), node.value, node.attr)
            if held:  # `corpus.train`: every value the class assigns to `self.train` is data
                return all(Graph(self.ctx, method, 10**9, {}, self.derived)._data(value, more) for method, value in held)
            return self._data(node.value, more)
        if isinstance(node, ast.Name):
            return self._data_name(node, more)
        if isinstance(node, ast.Call):
            return self._data_call(node, more)
        return False

    def _data_name(self, node: ast.Name, depth: int) -> bool:
        if self.ctx.is_model(node.id):
            return False
        role = self.ctx.role(node.id)
        if role is not None:
            return role.kind == "loader"  # a DataLoader yields data; an optimizer, a loss, a scaler are not data
        values = reaching(self.ctx, self.scope, node.id, min(node.lineno, self.line))  # what it held where it is read
        if not values:
            if node.id in self.data_params:
                return True
            module = self.ctx.home(self.scope).tree
            if self.scope is module:
                return False
            values = reaching(self.ctx, module, node.id, 10**9)  # a global of the helper's file
            if not values:
                return False
        return all(self._data_value(v, depth) for v in values)

    def _data_value(self, value: ast.AST, depth: int) -> bool:
        if isinstance(value, (ast.For, ast.AsyncFor)):
            iterable = unwrap_iter(value.iter)
            role = self.ctx.role(key_of(iterable))
            return role is not None and role.kind == "loader" or self._data(iterable, depth) or self._feeds_model(value)
        if isinstance(value, ast.AugAssign):
            return self._data(value.value, depth)
        return self._data(value, depth)

    def _feeds_model(self, loop: ast.For | ast.AsyncFor) -> bool:
        """Whether the loop hands what it iterates to a known model (``for x, y in loader: out = model(x.cuda())``):
        what a model consumes each iteration is a batch, so the iterable is the data and each of its items is data,
        whatever built it. An iterable that is itself a model, or of modules, feeds no model this way."""
        if self._model_call_in(loop.iter):
            return False
        derived = {n.id for n in walk(loop.target) if isinstance(n, ast.Name)}
        body = [n for stmt in loop.body for n in walk(stmt)]
        for node in body:  # `x, y = x.to(device), y.to(device)`, `images = batch["image"]`: still the batch
            if isinstance(node, ast.Assign) and not self._model_call_in(node.value) \
                    and any(isinstance(n, ast.Name) and n.id in derived for n in walk(node.value)):
                derived |= {n.id for t in node.targets for n in walk(t) if isinstance(n, ast.Name)}
        return any(isinstance(node, ast.Call) and self._model_call(node)
                   and any(isinstance(n, ast.Name) and n.id in derived for a in node.args for n in walk(a)) for node in body)

    def _model_call_in(self, node: ast.AST) -> bool:
        return any(isinstance(n, ast.Call) and self._model_call(n) or isinstance(n, ast.Name) and self.ctx.is_model(n.id)
                   for n in walk(node))

    def _data_returns(self, call: ast.Call, depth: int, index: int | None = None) -> bool:
        """A call whose value (or ``index``-th item) is data: a helper of the project all of whose returns are."""
        helpers = self._helpers(call.func)
        if not helpers:
            return self._data_call(call, depth)  # `x, y = next(iter(loader))`
        for helper in helpers:
            params = [a.arg for a in helper.args.posonlyargs + helper.args.args]  # type: ignore[attr-defined]
            if params and params[0] == "self" and isinstance(call.func, ast.Attribute):
                params = params[1:]
            returns = [n.value for n in scope_nodes(self.ctx, helper) if isinstance(n, ast.Return)]
            if index is not None:
                returns = [r.elts[index] if isinstance(r, ast.Tuple) and len(r.elts) > index else None for r in returns]
            inner = Graph(self.ctx, helper, 10**9, {}, self.derived, self._data_params(params, call, depth + 1, helper))
            if not returns or not all(inner._data(r, depth) for r in returns):
                return False
        return True

    def _data_call(self, call: ast.Call, depth: int) -> bool:
        func = call.func
        args = [*call.args, *(k.value for k in call.keywords)]
        qual = self.ctx.call_name(call) or ""
        last = qual.rsplit(".", 1)[-1]
        if qual.startswith(_DATA_MODULES) or qual.startswith("torch") and (last in _NO_GRAD_FUNCTIONS | _REWRAP or last.endswith("Tensor")):
            return True  # numpy, a dataset, a transform; `torch.zeros(n)`, `torch.tensor(x)`, `torch.LongTensor(ids)`: new tensors
        if isinstance(func, ast.Name) and not self.ctx.role(func.id) and func.id not in _BUILTINS:
            # a name bound to a torch tensor type: `Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor`
            types = reaching(self.ctx, self.scope, func.id, min(func.lineno, self.line)) \
                or reaching(self.ctx, self.ctx.home(self.scope).tree, func.id, 10**9)
            if types and all(self._tensor_type(t) for t in types):
                return True
        if any(isinstance(a, ast.Starred) for a in call.args):
            return False
        if self._helpers(func):
            return self._data_returns(call, depth)
        if qual.startswith("torch") and not _module_maker(qual):
            return all(self._data(a, depth) for a in args)  # `torch.cat((x0, x1))`, `Variable(img)`
        if isinstance(func, ast.Name) and func.id in _BUILTINS:
            return func.id in _DATA_BUILTINS and all(self._data(a, depth) for a in args)
        if isinstance(func, ast.Attribute):
            return self._data(func.value, depth) and all(self._data(a, depth) for a in args)  # `y.to(device)`
        return False

    def _tensor_type(self, node: ast.AST) -> bool:
        if isinstance(node, ast.IfExp):
            return self._tensor_type(node.body) and self._tensor_type(node.orelse)
        return (self.ctx.qualname(node) or "").rsplit(".", 1)[-1].endswith("Tensor")

    def _model_call(self, call: ast.Call) -> bool:
        """``model(x)`` or ``model.forward(x)`` of a key known to hold a model."""
        func = call.func
        if self.ctx.is_model(key_of(func)):
            return True
        return isinstance(func, ast.Attribute) and func.attr == "forward" and self.ctx.is_model(key_of(func.value))

    def _inside(self, scope: ast.AST, value: ast.AST, depth: int) -> bool:
        """Whether ``value``, an expression of the function ``scope`` (a method of a class), carries a graph."""
        inner = Graph(self.ctx, scope, 10**9, {}, self.derived, origin=self.origin)
        inner._seen = self._seen
        found = inner.connected(value, depth + 1)
        self.cut |= inner.cut
        self.leaf |= inner.leaf
        self.unknown |= inner.unknown
        return found

    def _through(self, helper: ast.AST, call: ast.Call, depth: int) -> bool:
        """A local function or method: connected when one of its returns is, given which arguments were."""
        params = [a.arg for a in helper.args.posonlyargs + helper.args.args]  # type: ignore[attr-defined]
        if params and params[0] == "self" and isinstance(call.func, ast.Attribute):
            params = params[1:]
        bound = {p: self._lazy(a, depth) for p, a in zip(params, call.args) if not isinstance(a, ast.Starred)}
        bound.update({k.arg: self._lazy(k.value, depth) for k in call.keywords if k.arg})
        inner = Graph(self.ctx, helper, 10**9, bound, self.derived, self._data_params(params, call, depth + 1, helper), self.origin)
        inner._seen = self._seen
        found = any(inner.connected(n.value, depth + 1) for n in scope_nodes(self.ctx, helper) if isinstance(n, ast.Return))
        self.cut |= inner.cut
        self.leaf |= inner.leaf
        self.unknown |= inner.unknown
        return found


    # -- tensors made to require grad again ------------------------------------------------------------------------------
    def _lazy(self, arg: ast.AST, depth: int) -> _Lazy:
        """A helper's parameter bound to the caller's ``arg``: asked whether it is connected, and where it came from."""
        origin = None if self.origin else (lambda: self._origin(arg, depth + 1))
        return _Lazy(lambda: self.connected(arg, depth + 1), origin)

    def _origin(self, node: ast.AST, depth: int) -> tuple[bool, bool]:
        """Whether ``node`` is computed from a model's outputs, through cuts too; and whether the answer is unknown."""
        probe = Graph(self.ctx, self.scope, self.line, self.bound, data_params=self.data_params, origin=True)
        return probe.connected(node, depth), probe.unknown

    def _releafed(self, node: ast.AST, depth: int) -> None:
        """``node`` is a tensor made to require grad (``.requires_grad_()``, ``requires_grad=True``): a leaf the backward
        reaches on purpose (:attr:`leaf`) unless it holds a model's output cut off (``model(x).detach()
        .requires_grad_()``: TW108's bug) or what it holds is not known."""
        if not self.origin and self._origin(node, depth + 1) == (False, False):
            self.leaf = True

    def _turned_on(self, node: ast.Name, values: list[ast.AST]) -> bool:
        """Whether ``node.id`` is made to require grad by a statement (``x.requires_grad = True``, ``x.requires_grad_()``)
        after the assignment that reaches this use and before the line asked about."""
        lines = _requires_grad_statements(self.ctx, self.scope).get(node.id)
        plain = next((v for v in values if not isinstance(v, ast.AugAssign)), None)
        start = getattr(plain, "lineno", 0)
        return bool(lines) and any(start <= line < self.line for line in lines)  # type: ignore[union-attr]

    def _origin_name(self, node: ast.Name, depth: int) -> bool:
        """Origin mode's reading of a name: the assignments above the use (one below it may bring a model's output
        round a loop: unknown); a helper's parameter, from what the caller passed; anything else, unknown."""
        line = min(node.lineno, self.line)
        if (node.id, id(node)) in self._seen or any(d > node.lineno for d, _ in definitions(self.ctx, self.scope).get(node.id, [])):
            self.unknown = True
            return False
        self._seen.add((node.id, id(node)))
        values = reaching(self.ctx, self.scope, node.id, line)
        if backpropagated(self.ctx, self.scope, node, values):
            return True
        if not values:
            found = self.bound.get(node.id)
            if isinstance(found, _Lazy):
                if found.ask_origin is None:
                    return found()  # bound by a helper walked in origin mode: its answer is already this question's
                derived, unknown = found.origin()
                self.unknown |= unknown
                return derived
            if found is None and (node.id in self.data_params or node.id in _BUILTINS or node.id in self.ctx.home(self.scope).imports):
                return False
            self.unknown |= not found
            return bool(found)
        result = False
        for value in values:
            if isinstance(value, (ast.For, ast.AsyncFor)):
                self.unknown |= not self._data_value(value, 0)  # a loop's items: data, or unknown
            else:
                result |= self.connected(value.value if isinstance(value, ast.AugAssign) else value, depth + 1)
        return result

    def _origin_call(self, call: ast.Call, depth: int) -> bool | None:
        """Origin mode's reading of the calls that cut or copy (what they were made of) and of torch's factories (a
        shape); None for every other call, read as :meth:`_call` reads it."""
        func = call.func
        qual = self.ctx.call_name(call) or ""
        last = qual.rsplit(".", 1)[-1]
        if isinstance(func, ast.Attribute) and not qual and func.attr in CUTS | _MOVES:
            return self.connected(func.value, depth + 1)  # `.detach()`, `.item()`, `.to(device)`: the receiver's values
        if qual.startswith("torch") and last in _FACTORIES:
            return False
        if qual.startswith("torch") and last in _REWRAP or isinstance(func, ast.Name) and func.id in ("float", "int"):
            return any(self.connected(a, depth + 1) for a in call.args)
        return None


def requires_grad_on(ctx: FileContext, call: ast.Call) -> bool:
    """``x.requires_grad_()``, ``torch.tensor(v, requires_grad=True)``, ``torch.zeros(n, requires_grad=flag)``: the
    result requires grad (a flag that is not a literal False may be on)."""
    if isinstance(call.func, ast.Attribute) and call.func.attr == "requires_grad_":
        flag = call.args[0] if call.args else kwarg(call, "requires_grad")
    else:
        qual = ctx.call_name(call) or ""
        if not (qual.startswith("torch") and qual.rsplit(".", 1)[-1] in _REWRAP | _FACTORIES):
            return False
        flag = kwarg(call, "requires_grad")
        if flag is None:
            return False
    return not (isinstance(flag, ast.Constant) and not flag.value)


def _requires_grad_statements(ctx: FileContext, scope: ast.AST) -> dict[str, list[int]]:
    """name -> the lines of ``scope`` where a statement makes that name require grad (``x.requires_grad = True``,
    ``x.requires_grad_()``); cached per scope."""
    cache = ctx.__dict__.setdefault("_requires_grad_statements", {})
    if id(scope) not in cache:
        found: dict[str, list[int]] = {}
        for node in scope_nodes(ctx, scope):
            if isinstance(node, ast.Assign) and not (isinstance(node.value, ast.Constant) and not node.value.value):
                targets = [t.value for t in node.targets if isinstance(t, ast.Attribute) and t.attr == "requires_grad"]
            elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute) \
                    and node.value.func.attr == "requires_grad_" and requires_grad_on(ctx, node.value):
                targets = [node.value.func.value]
            else:
                continue
            for target in targets:
                if isinstance(target, ast.Name):
                    found.setdefault(target.id, []).append(node.lineno)
        cache[id(scope)] = found
    return cache[id(scope)]


_STORES = {"append", "extend", "insert", "add", "update", "put", "appendleft", "setdefault", "add_", "copy_"}


def sealed(ctx: FileContext, scope: ast.AST) -> bool:
    """Whether no autograd graph built in the function ``scope`` can leave it: it backpropagates nothing, and
    everything it returns, yields, stores (attributes, items, containers) or hands to another callable is proven
    graph-free (``losses[k] = loss.item()``; ``return out`` of floats). Then a forward pass inside it is evaluation,
    whatever its caller does next (``estimate_loss()`` every N steps of a training loop). Cached per function."""
    cache = ctx.__dict__.setdefault("_sealed", {})
    if id(scope) not in cache:
        cache[id(scope)] = _sealed(ctx, scope)
    return cache[id(scope)]


def _sealed(ctx: FileContext, scope: ast.AST) -> bool:
    if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    leaving: list[tuple[ast.AST, int]] = []  # (value that leaves, line)
    for node in scope_nodes(ctx, scope):
        if isinstance(node, (ast.Global, ast.Nonlocal, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return False  # a closure or a global may keep anything
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else None
            if name in ("backward", "manual_backward", "step") or (ctx.qualname(func) or "") == "torch.autograd.grad":
                return False  # it trains (or takes gradients) itself
            if name in _STORES or not _harmless_callee(ctx, node):
                leaving += [(a, node.lineno) for a in [*node.args, *(k.value for k in node.keywords)]]
        elif isinstance(node, (ast.Return, ast.Yield, ast.YieldFrom)) and node.value is not None:
            leaving.append((node.value, 10**9))
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if not all(_local_target(t) for t in targets):
                leaving.append((node.value, node.lineno))
    for value, line in leaving:
        graph = Graph(ctx, scope, line)
        if graph.connected(value) or graph.unknown:
            return False
    return True


def _local_target(target: ast.AST) -> bool:
    """A name, or a tuple of names (``logits, loss = model(x, y)``): the value stays in the function."""
    if isinstance(target, (ast.Tuple, ast.List)):
        return all(_local_target(t) for t in target.elts)
    return isinstance(target, ast.Name) or isinstance(target, ast.Starred) and _local_target(target.value)


def _harmless_callee(ctx: FileContext, call: ast.Call) -> bool:
    """A callable that cannot keep its arguments: torch's functions, a model or loss of the file, builtins such as
    ``print``/``len``, and methods of values that are themselves local names (a tensor's ``.mean()``)."""
    func = call.func
    qual = ctx.qualname(func) or ""
    if qual.startswith("torch") or ctx.role(key_of(func)) is not None:
        return True
    if isinstance(func, ast.Name):
        return func.id in _BUILTINS and func.id not in ("setattr", "exec", "eval", "globals", "vars")
    return False


def closed_call(ctx: FileContext, call: ast.Call, caller: ast.AST, callee: ast.AST, sites: tuple[Site, ...]) -> bool:
    """Whether no autograd graph that the function ``caller`` built can reach ``callee`` through ``call``: the callee
    is a top-level function (no closure over the caller, no ``self``), the caller a function that declares no
    globals (its values are its own locals), and every argument a model or a value proven to carry no graph
    (``ODFA(model, inputs)``: a backward() inside backpropagates only what the callee builds itself)."""
    home, caller_home = ctx.home(callee), ctx.home(caller)
    if not isinstance(caller, (ast.FunctionDef, ast.AsyncFunctionDef)) or callee not in home.functions.values():
        return False
    if any(isinstance(n, (ast.Global, ast.Nonlocal)) for n in scope_nodes(caller_home, caller)):
        return False
    graph = Graph(caller_home, caller, call.lineno, _bound(ctx, sites))
    for arg in [*call.args, *(k.value for k in call.keywords)]:
        key = key_of(arg)
        if isinstance(arg, ast.Starred) or key == "self" or key is not None and "." in key and not caller_home.is_model(key):
            return False  # an attribute may hold anything
        if not caller_home.is_model(key) and (not isinstance(arg, (ast.Name, ast.Constant)) or graph.connected(arg)):
            return False
    return not graph.unknown


def graph_at(ctx: FileContext, event: Event) -> Graph:
    """The :class:`Graph` question asked just after ``event``, with the parameters of the helper it sits in bound to
    what the calls that led there passed (``meter.update(loss)`` runs ``self.values.append(value)``: ``value`` is
    ``loss``)."""
    return Graph(ctx, event.scope, event.line + 1, _bound(ctx, event.sites))  # type: ignore[arg-type]


def _bound(ctx: FileContext, sites: tuple[Site, ...]) -> dict[str, bool]:
    """Which parameters of the innermost callee of ``sites`` receive a graph-carrying argument."""
    if not sites:
        return {}
    site = sites[-1]
    fn = site.callee
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]  # type: ignore[attr-defined]
    if site.method and params:
        params = params[1:]
    caller = Graph(ctx, site.caller, site.call.lineno, _bound(ctx, sites[:-1]))  # type: ignore[arg-type]
    bound: dict[str, bool] = {}
    for param, arg in zip(params, site.call.args):
        if isinstance(arg, ast.Starred):
            break
        bound[param] = caller.connected(arg)
    names = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}  # type: ignore[attr-defined]
    bound.update({k.arg: caller.connected(k.value) for k in site.call.keywords if k.arg in names})
    return bound
