"""TW504 (opt-in): a training program that draws random numbers and never seeds.

Premises, each read from the file: it is a program that trains (a loop with
backward and an optimizer step is reached from the module's own code, directly
or through its ``if __name__ == "__main__":`` block, not a library of
functions); it draws random numbers through torch (a model built here, whose
weights are randomly initialised, not loaded: no ``pretrained`` / ``weights=`` /
``from_pretrained`` / ``load_state_dict``; a shuffling loader; ``torch.randn`` and
friends; Dropout); and nothing in the file, nor in the project modules it
imports from, says ``seed`` (``torch.manual_seed``, ``seed_everything``,
``set_seed``, a seed read from the config or the command line, a seeded
``torch.Generator``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from trainwell.diagnostic import Finding
from trainwell.lint.context import FileContext, key_of, kwarg, method_name, strip_identity
from trainwell.lint import events as ev
from trainwell.lint.events import Frame
from trainwell.lint.rules import TRAINING
from trainwell.lint.rules._data import trains
from trainwell.lint.dataflow import scope_nodes
from trainwell.lint.syntax import walk

CODE = "TW504"
REQUIRES = TRAINING
# what a module of the project must say to seed anything: a call whose name ends in seed (`torch.manual_seed(`,
# `set_seed(`, `np.random.seed(`), seeds, `seed_all` or `seed_everything`; a config that only holds `SEED = 0` seeds nothing
_SEEDING_CALLS = ("seed(", "seeds(", "seed_all(", "seed_everything(")
_DRAWS = {"randn", "rand", "randint", "randperm", "normal", "bernoulli", "multinomial", "rand_like", "randn_like"}


def check(ctx: FileContext) -> Iterator[Finding]:
    if "torch" not in ctx.source or _says_seed(ctx):
        return
    started = _started_by_the_program(ctx)
    training = [f for f in ctx.analysis.frames if f.kind == "loop" and _trains(ctx, f) and id(_root(f).node) in started]
    if not training:
        return  # a library or a model definition: only a program that trains has a run to replay
    if ctx.project is not None and ctx.project.mentions(ctx, _SEEDING_CALLS):
        return  # a project helper it imports may seed (a `set_seed` in utils)
    draws = _random_draws(ctx)
    if not draws:
        return
    line, what, node = min(draws, key=lambda d: d[0])
    step = min(training, key=lambda f: f.node.lineno)
    yield ctx.finding(
        CODE, node,
        f"this program trains (loop at line {step.node.lineno}) and draws random numbers ({what} at line {line}) but "
        "never seeds torch: two runs of the same code and data give different models, and a failure cannot be replayed.",
        "Call torch.manual_seed(seed) (and random.seed / numpy.random.seed where they are used) at the start of the "
        "program, with the seed read from the config or the command line.",
    )


def _trains(ctx: FileContext, frame: Frame) -> bool:
    """A loop whose iteration runs backward and an optimizer step, or steps with a closure that runs backward
    (``optimizer.step(closure)``, LBFGS)."""
    return trains(frame) or any(_closure_backward(ctx, e.node) for e in frame.of(ev.STEP))


def _closure_backward(ctx: FileContext, call: ast.AST) -> bool:
    if not isinstance(call, ast.Call):
        return False
    closure = call.args[0] if call.args else kwarg(call, "closure")
    name = closure.id if isinstance(closure, ast.Name) else None
    defs = [n for n in ctx.nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name]
    return len(defs) == 1 and any(method_name(n) == "backward" for n in walk(defs[0]))


def _says_seed(ctx: FileContext) -> bool:
    """Whether the code (not a docstring or comment) may seed torch: a call whose name says seed, other than
    ``random.seed`` / ``numpy.random.seed`` / a gym env's ``seed``; or a seed value (a name, attribute, key or
    keyword that says seed, or a name assigned from one) that reaches anything but a condition, a message, a
    declaration on the command line or one of those non-torch seeders. A seed read from the config or the
    command line that goes into an unknown call (a helper, a framework, ``Trainer(seed=...)``) counts as seeding."""
    if "seed" not in ctx.source.lower():
        return False
    parents = {id(child): node for node in ctx.nodes for child in ast.iter_child_nodes(node)}
    docstrings = {id(n.value) for n in ctx.nodes if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    aliases: set[str] = set()
    while True:
        grown = False
        for node in ctx.nodes:
            if isinstance(node, ast.Call) and _seed_call(ctx, node) is True:
                return True
            if id(node) in docstrings or not _mentions(node, aliases):
                continue
            use = _use_of_seed(ctx, node, parents)
            if use is True:
                return True
            if isinstance(use, set) and not use <= aliases:
                aliases |= use
                grown = True
        if not grown:
            return False


def _mentions(node: ast.AST, aliases: set[str]) -> bool:
    if isinstance(node, ast.Name):
        return "seed" in node.id.lower() or node.id in aliases
    if isinstance(node, ast.Attribute):
        return "seed" in node.attr.lower() or key_of(node) in aliases
    if isinstance(node, ast.keyword):
        return "seed" in (node.arg or "").lower()
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and "seed" in node.value.lower()
    return False  # a def, a parameter or an import that says seed: what counts is where it is called or read


_NON_TORCH_SEEDERS = {"random.seed", "numpy.random.seed", "tensorflow.random.set_seed"}
_NON_TORCH_GENERATORS = {"random.Random", "numpy.random.default_rng", "numpy.random.RandomState",
                         "numpy.random.SeedSequence", "jax.random.PRNGKey", "jax.random.key"}
_CONVERSIONS = {"int", "str", "float", "abs", "hash"}
_MESSAGES = {"print", "info", "debug", "warning", "warn", "error", "log", "write", "format", "add_scalar", "add_text",
             "set_postfix", "set_description"}


def _seed_call(ctx: FileContext, call: ast.Call) -> bool | None:
    """True for a call whose name says seed and that may seed torch; False for a seed call known not to
    (``random.seed``, ``np.random.seed``, a gym env's ``env.seed`` / ``env.action_space.seed``); None otherwise."""
    name = (key_of(call.func) or "").rsplit(".", 1)[-1] if key_of(call.func) else (method_name(call) or "")
    if "seed" not in name.lower():
        return None
    return not _non_torch(ctx, call)


def _env(call: ast.Call) -> bool:
    receiver = key_of(call.func.value) if isinstance(call.func, ast.Attribute) else None
    return receiver is not None and any(w in receiver.lower() for w in ("env", "action_space", "observation_space"))


def _non_torch(ctx: FileContext, call: ast.Call) -> bool:
    """A call known not to seed torch when given a seed: another library's seeder or generator, a message, a
    gym env's ``seed`` / ``reset(seed=...)``, the parser's ``add_argument`` that declares it."""
    qual = ctx.call_name(call) or ""
    last = (method_name(call) or key_of(call.func) or "").rsplit(".", 1)[-1]
    if qual in _NON_TORCH_SEEDERS or qual in _NON_TORCH_GENERATORS:
        return True
    if last in ("seed", "reset") and _env(call):
        return True
    return last in _MESSAGES or last in ("add_argument", "set_defaults") or qual.startswith(("logging.", "warnings."))


_BUILTINS = {"print", "vars", "str", "repr", "len", "getattr", "setattr", "hasattr", "isinstance", "dict", "pprint"}


def _handed_over(ctx: FileContext, name: str) -> bool:
    """Whether the namespace that holds the seed (``args`` of ``args.seed``) is passed whole to a callee this
    file does not show (a library's ``setup(args)``), which may seed from it."""
    local = set(ctx.functions) | set(ctx.nested_functions) | set(ctx.classes)
    shadowed = _calls_where_local(ctx, name)
    for call in ctx.calls:
        if id(call) in shadowed:
            continue  # `args = [method, rref] + list(args)` in a helper: another object of the same name
        given = [*call.args, *(k.value for k in call.keywords)]
        given += [e for g in given if isinstance(g, (ast.Tuple, ast.List)) for e in g.elts]
        if not any(isinstance(g, ast.Name) and g.id == name for g in given):
            continue
        callee = key_of(call.func) or ""
        qual = ctx.call_name(call) or ""
        if callee in local or callee.rsplit(".", 1)[-1] in _BUILTINS or qual.startswith("torch") or _non_torch(ctx, call):
            continue
        if ctx.project is not None and (ctx.project.function(ctx, call.func) or ctx.project.class_def(ctx, call.func)):
            continue  # a project helper: the project's modules are read for seeds in check()
        return True
    return False


def _calls_where_local(ctx: FileContext, name: str) -> set[int]:
    """The calls inside functions that bind ``name`` themselves (a parameter or an assignment): there it is not the
    module's namespace."""
    found: set[int] = set()
    for fn in [*ctx.functions.values(), *ctx.nested_functions.values(), *(m for ms in ctx.methods.values() for m in ms.values())]:
        nodes = scope_nodes(ctx, fn)
        params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs} | {
            a.arg for a in (fn.args.vararg, fn.args.kwarg) if a is not None}
        if name in params or any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in nodes):
            found |= {id(n) for n in nodes if isinstance(n, ast.Call)}
    return found


def _use_of_seed(ctx: FileContext, node: ast.AST, parents: dict[int, ast.AST]) -> bool | set[str]:
    """Where a seed value goes: True when it may seed torch (an unknown call, a container, a return), the keys
    it is assigned to (to follow), or an empty set when it only reaches a harmless place."""
    if isinstance(getattr(node, "ctx", None), (ast.Store, ast.Del)):
        return set()  # a definition: its reads are what count
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and _handed_over(ctx, node.value.id):
        return True
    child = node
    parent = parents.get(id(child))
    while parent is not None:
        if isinstance(parent, ast.Call):
            if child is parent.func:
                return set()  # `args.seed_everything(...)`: the call itself is judged by _seed_call
            if (key_of(parent.func) or "") in _CONVERSIONS or method_name(parent) == "get":
                child, parent = parent, parents.get(id(parent))  # `int(args.seed)`, `cfg.get("seed", 0)`
                continue
            return set() if _non_torch(ctx, parent) else True
        if isinstance(parent, ast.Attribute) and child is parent.value:
            child, parent = parent, parents.get(id(parent))  # `cfg.seed.value`: the whole chain is the value
            continue
        if isinstance(parent, (ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.IfExp, ast.keyword, ast.Starred)) or (
                isinstance(parent, ast.Subscript) and child is parent.slice):
            child, parent = parent, parents.get(id(parent))  # `1337 + seed_offset`, `cfg["seed"]`, `seed=...`
            continue
        if isinstance(parent, ast.Subscript):
            if isinstance(parent.ctx, ast.Store):
                return set()
            child, parent = parent, parents.get(id(parent))
            continue
        if isinstance(parent, (ast.Compare, ast.JoinedStr, ast.FormattedValue, ast.Assert)):
            return set()  # a condition or a message: not a seed for torch
        if isinstance(parent, (ast.If, ast.While)) and child is parent.test:
            return set()
        if isinstance(parent, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
            targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
            if child in targets or isinstance(getattr(child, "ctx", None), ast.Store):
                return set()  # a definition: its reads are what count
            keys = {key_of(t) for t in targets}
            return True if None in keys else {k for k in keys if k is not None}
        if isinstance(parent, ast.Expr):
            return set()  # a bare expression statement: the value goes nowhere
        return True  # a return, a container, a default: it may reach a seeder we cannot see
    return set()


def _started_by_the_program(ctx: FileContext) -> set[int]:
    """The module, and the functions its own code (or a function it reaches) hands to a call that runs them:
    ``mp.spawn(run_worker, ...)``, ``Process(target=train)``. A function only defined, never handed over, is a
    library's."""
    started, todo = {id(ctx.tree)}, [ctx.tree]
    while todo:
        scope = todo.pop()
        for node in scope_nodes(ctx, scope):
            if not isinstance(node, ast.Call):
                continue
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                fn = ctx.functions.get(arg.id) if isinstance(arg, ast.Name) else None
                if fn is not None and id(fn) not in started:
                    started.add(id(fn))
                    todo.append(fn)
            fn = ctx.functions.get(node.func.id) if isinstance(node.func, ast.Name) else None
            if fn is not None and id(fn) not in started:  # `main()` under the main guard: what it hands over counts too
                started.add(id(fn))
                todo.append(fn)
    return started


def _root(frame: Frame) -> Frame:
    while frame.parent is not None:
        frame = frame.parent
    return frame


_WEIGHTS = ("pretrained", "weights=", "load_state_dict", "from_pretrained", "torch.load", "hub.load")


def _loads_weights(ctx: FileContext, key: str, call: ast.Call) -> bool:
    """Whether the model's weights come from a file or a hub rather than its random initialisation: the call (or
    its local class) says pretrained / weights= / from_pretrained / load_state_dict, or ``key.load_state_dict``."""
    text = ast.unparse(call)
    name = (key_of(call.func) or "").rsplit(".", 1)[-1]
    if name in ctx.classes:
        text += ast.unparse(ctx.classes[name])
    text = text.replace("weights=None", "").replace("pretrained=False", "")  # torchvision's random initialisation
    return any(w in text for w in _WEIGHTS) or f"{key}.load_state_dict(" in ctx.source


def _built_by_a_class(ctx: FileContext, key: str) -> ast.Call | None:
    """For a model known only because an optimizer holds its parameters (its class is in a module the check does
    not read): the constructor call the file assigns it from, ``TransformerNet().to(device)``, when every value it
    is given is a class's (imported or local, capitalised by convention); None for a factory function or a load."""
    values = [strip_identity(a.value) for a in ctx.assigns if len(a.targets) == 1 and key_of(a.targets[0]) == key]
    if not values or not all(isinstance(v, ast.Call) and _a_class(ctx, v) for v in values):
        return None
    return values[0]  # type: ignore[return-value]


def _a_class(ctx: FileContext, call: ast.Call) -> bool:
    name = key_of(call.func) or ""
    head = name.partition(".")[0]
    imported = head in ctx.imports or head in ctx.relative_imports or name in ctx.classes
    return imported and name.rsplit(".", 1)[-1][:1].isupper()


_RANDOM_INITS = {"normal_", "uniform_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_",
                 "trunc_normal_", "orthogonal_", "sparse_"}
_IN_PLACE_DRAWS = {"normal_", "uniform_", "bernoulli_", "random_", "exponential_", "cauchy_", "log_normal_", "geometric_"}


def _shuffles_unless_sampled(call: ast.Call) -> bool:
    """``DataLoader(data, shuffle=(sampler is None), sampler=sampler)``: it shuffles whenever no sampler is given."""
    shuffle, sampler = kwarg(call, "shuffle"), kwarg(call, "sampler")
    return isinstance(shuffle, ast.Compare) and len(shuffle.ops) == 1 and isinstance(shuffle.ops[0], ast.Is) \
        and isinstance(shuffle.comparators[0], ast.Constant) and shuffle.comparators[0].value is None \
        and sampler is not None and key_of(shuffle.left) is not None and key_of(shuffle.left) == key_of(sampler)


def _random_draws(ctx: FileContext) -> list[tuple[int, str, ast.AST]]:
    """(line, what, node) of each place the program draws from torch's generator (not inside module classes: a
    module's layers are drawn where the module is built; an agent's or trainer's ``__init__`` builds its models
    when the program builds it)."""
    in_classes = {id(n) for name, cls in ctx.classes.items() if ctx.is_module_class(name) for n in walk(cls)}
    found = []
    for key, role in ctx.roles.items():
        built = role.node if isinstance(role.node, ast.Call) else _built_by_a_class(ctx, key) if role.kind == "model" else None
        if role.kind == "model" and built is not None and not _loads_weights(ctx, key, built):
            found.append((built.lineno, f"`{key}` is built with random initial weights", built))
        elif role.kind == "loader" and isinstance(role.node, ast.Call):
            shuffle = kwarg(role.node, "shuffle")
            if isinstance(shuffle, ast.Constant) and shuffle.value is True:
                found.append((role.node.lineno, f"`{key}` shuffles", role.node))
            elif _shuffles_unless_sampled(role.node):
                found.append((role.node.lineno, f"`{key}` shuffles when it is given no sampler", role.node))
    for call in ctx.calls:
        qual = ctx.call_name(call) or ""
        last = qual.rsplit(".", 1)[-1]
        if qual.startswith("torch") and (last in _DRAWS or last in ("Dropout", "dropout")) \
                or qual.startswith("torch.nn.init.") and last in _RANDOM_INITS \
                or qual.startswith("torchvision.transforms") and last.startswith("Random"):
            found.append((call.lineno, f"`{ast.unparse(call.func)}`", call))
        elif method_name(call) in _IN_PLACE_DRAWS:  # `model.fc.weight.data.normal_(0, 0.01)`
            found.append((call.lineno, f"`{ast.unparse(call.func)}`", call))
    return [d for d in found if id(d[2]) not in in_classes]
