"""Training loops and the ordered events of one iteration.

The file is walked from its entry points (the module body, and every function
or method that nothing in the file calls) along the control flow. Calls to
functions and methods defined in the same file are inlined (up to
``MAX_DEPTH`` deep), with their parameters renamed to the caller's arguments,
so ``train_one_epoch(model, train_loader, opt)`` is seen from inside the epoch
loop. Each loop becomes a :class:`Frame` holding the events of one iteration,
with the ``if`` branches they sit in, whether autograd is on, and the mode
(train/eval) each model may be in. Loops are walked twice so that the state
at the loop head includes what the previous iteration left behind.
"""

from __future__ import annotations

import ast
from functools import cached_property

from trainwell.lint import events as ev
from trainwell.lint.context import FileContext, key_of, method_name
from trainwell.lint.dataflow import scope_nodes, sealed
from trainwell.lint.events import Event, Frame, calls_in_order, chained_mode, grad_of, is_periodic, subst_key
from trainwell.lint.ownership import Ownership

MAX_DEPTH = 4
_EVENT_METHODS = {"backward", "zero_grad", "step", "eval", "train", "clip_grad_norm_", "clip_grad_value_", "unscale_",
                  "requires_grad_", "manual_backward", "load_state_dict", "zero_", "forward"}
MAX_EVENTS = 50_000
_UPDATES = {"add_", "sub_", "copy_", "addcdiv_", "addcmul_"}  # in-place updates of a parameter from its gradient
UNKNOWN = "unknown"
Function = ast.FunctionDef | ast.AsyncFunctionDef


class Env:
    """Where the walk is: the renaming of parameters, the function and class it is in."""

    __slots__ = ("subst", "scope", "cls", "stack", "local_defs", "sites")

    def __init__(self, subst: dict[str, str], scope: ast.AST, cls: str | None, stack: tuple[ast.AST, ...],
                 sites: tuple[ev.Site, ...] = ()) -> None:
        self.subst = subst
        self.scope = scope
        self.cls = cls
        self.stack = stack
        self.sites = sites  # the calls that inlined this function, outermost first
        body = getattr(scope, "body", [])
        self.local_defs = {s.name: s for s in body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))} if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) else {}


def _is_main_guard(test: ast.expr) -> bool:
    return isinstance(test, ast.Compare) and key_of(test.left) == "__name__"


def _ends_the_run(body: list[ast.stmt]) -> bool:
    """A branch whose last statement raises, fails an ``assert False`` or exits: its state never flows on."""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, ast.Raise):
        return True
    if isinstance(last, ast.Assert) and isinstance(last.test, ast.Constant) and not last.test.value:
        return True
    return isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) and key_of(last.value.func) in ("sys.exit", "exit", "quit")


def _keeps_an_argument(ctx: FileContext, fn: ast.AST) -> bool:
    """Whether ``fn`` stores one of its arguments where it outlives the call (``self.values.append(value)``,
    ``history.append(loss)``, ``self.total += value``): a meter or a recorder, whose stores the rules must see."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
    holders = params | {"self"}
    for node in scope_nodes(ctx, fn):
        if isinstance(node, ast.Call) and method_name(node) in ev.STORES and (key_of(node.func.value) or "").partition(".")[0] in holders:  # type: ignore[attr-defined]
            stored = node.args
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Attribute) and (key_of(node.target) or "").partition(".")[0] in holders:
            stored = [node.value]
        else:
            continue
        if any(isinstance(n, ast.Name) and n.id in params - {"self"} for a in stored for n in ast.walk(a)):
            return True
    return False


def _join(a: dict[str, frozenset], b: dict[str, frozenset]) -> dict[str, frozenset]:
    unknown = frozenset({UNKNOWN})
    return {k: a.get(k, unknown) | b.get(k, unknown) for k in a.keys() | b.keys()}


class Analysis(Ownership):
    """Frames (loops) and events of one file, built once and shared by the rules."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.frames: list[Frame] = []
        self.events: list[Event] = []
        self.modes: dict[str, frozenset] = {}
        self.recording = True
        self.frame: Frame | None = None
        self.conds: tuple[tuple[int, bool], ...] = ()
        self.periodic: tuple[ast.If, ...] = ()
        self.grad: bool | None = True
        self.frozen: set[str] = set()  # models whose parameters were all set `requires_grad = False` along the walk
        self._seq = 0
        self.track_modes = ".eval(" in ctx.source or ".train(" in ctx.source
        self._callees: dict[int, list[ast.AST]] = {}
        self._memo: dict[int, bool] = {}
        self._optimizer_models: dict[str | None, set[str]] = {}
        self._build()

    # -- entry points --------------------------------------------------------
    def _build(self) -> None:
        called = self._called_functions()
        if self._interesting(self.ctx.tree):
            self._entry(self.ctx.tree, self.ctx.tree.body, None, True)
        for fn in self.ctx.functions.values():
            if fn not in called and self._interesting(fn):
                self._entry(fn, fn.body, None, self._decorated_grad(fn))
        for cls, methods in self.ctx.methods.items():
            if self.ctx.is_module_class(cls):
                continue  # a module's own methods run inside forward passes we cannot place
            for fn in methods.values():
                if fn not in called and fn.name != "__init__" and self._interesting(fn):
                    self._entry(fn, fn.body, cls, self._decorated_grad(fn))

    def _entry(self, scope: ast.AST, body: list[ast.stmt], cls: str | None, grad: bool | None) -> None:
        frame = Frame(scope, None, "body")
        self.frames.append(frame)
        self.frame, self.conds, self.periodic, self.grad, self.modes = frame, (), (), grad, {}
        self.frozen = set()
        self._block(body, Env({}, scope, cls, (scope,)))

    def _called_functions(self) -> set[ast.AST]:
        called: set[ast.AST] = set()
        scopes: list[tuple[ast.AST, str | None]] = [(self.ctx.tree, None)]
        scopes += [(fn, None) for fn in self.ctx.functions.values()]
        scopes += [(fn, cls) for cls, ms in self.ctx.methods.items() for fn in ms.values()]
        for scope, cls in scopes:
            env = Env({}, scope, cls, (scope,))
            for node in scope_nodes(self.ctx, scope):
                if isinstance(node, ast.Call):
                    target = self._resolve(node, env, local=True)
                    if target is not None and target[0] is not scope:
                        called.add(target[0])
                        self._callees.setdefault(id(scope), []).append(target[0])
        return called

    def _interesting(self, fn: ast.AST, seen: frozenset = frozenset()) -> bool:
        """Whether inlining ``fn`` can add a training event (directly or through the helpers it calls)."""
        if id(fn) in self._memo:
            return self._memo[id(fn)]
        found = any(
            isinstance(n, ast.Call) and (method_name(n) in _EVENT_METHODS or self.ctx.role(key_of(n.func)) is not None)
            or isinstance(n, ast.Attribute) and n.attr in ("grad", "requires_grad")
            for n in scope_nodes(self.ctx, fn)
        ) or _keeps_an_argument(self.ctx, fn) or any(c not in seen and self._interesting(c, seen | {fn}) for c in self._callees.get(id(fn), [])) \
            or any(c not in seen and self._interesting(c, seen | {fn}) for c in self._project_callees(fn))
        for nested in (n for n in getattr(fn, "body", []) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
            found = found or self._interesting(nested, seen | {fn})
        self._memo[id(fn)] = found
        return found

    def _project_callees(self, fn: ast.AST) -> list[Function]:
        """Functions of other files of the project that ``fn`` calls by an imported name (``train_step(...)`` after
        ``from engine import train_step``): a per-batch helper there may hold the whole step."""
        project = self.ctx.project
        if project is None:
            return []
        home = self.ctx.home(fn)
        imported = home.imports.keys() | home.relative_imports.keys()
        found = []
        for node in scope_nodes(self.ctx, fn):
            if isinstance(node, ast.Call) and (key_of(node.func) or "").partition(".")[0] in imported:
                target = project.function(home, node.func)
                if target is not None:
                    found.append(target[1])
        return found

    def _decorated_grad(self, fn: Function) -> bool | None:
        for decorator in fn.decorator_list:
            grad = grad_of(self.ctx, decorator)
            if grad is not None:
                return grad
        return None

    # -- statements ------------------------------------------------------------
    def _block(self, body: list[ast.stmt], env: Env) -> None:
        for stmt in body:
            self._stmt(stmt, env)

    def _stmt(self, stmt: ast.stmt, env: Env) -> None:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)):
            return
        if isinstance(stmt, ast.If):
            self._calls(stmt.test, env)
            if _is_main_guard(stmt.test):
                self._block(stmt.body, env)
                self._block(stmt.orelse, env)
            else:
                self._branches(stmt, [(stmt.body, True), (stmt.orelse, False)], env, is_periodic(stmt.test))
        elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            self._calls(stmt.iter if not isinstance(stmt, ast.While) else stmt.test, env)
            self._loop(stmt, env)
            self._block(stmt.orelse, env)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            grad = self.grad
            for item in stmt.items:
                self._calls(item.context_expr, env)
                changed = grad_of(self.ctx, item.context_expr)
                if changed is not None:
                    self.grad = changed
            self._block(stmt.body, env)
            self.grad = grad
        elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            self._block(stmt.body, env)  # type: ignore[attr-defined]
            handlers = [(h.body, True) for h in stmt.handlers]  # type: ignore[attr-defined]
            if handlers:
                self._branches(stmt, handlers + [([], False)], env, False)
            self._block(stmt.orelse, env)  # type: ignore[attr-defined]
            self._block(stmt.finalbody, env)  # type: ignore[attr-defined]
        elif isinstance(stmt, ast.Match):
            self._calls(stmt.subject, env)
            self._branches(stmt, [(case.body, True) for case in stmt.cases] + [([], False)], env, False)
        else:
            self._calls(stmt, env)
            self._assignment(stmt, env)

    def _branches(self, node: ast.AST, branches: list[tuple[list[ast.stmt], bool]], env: Env, periodic: bool) -> None:
        conds, windows, before = self.conds, self.periodic, self.modes
        outcomes = []
        for index, (body, _) in enumerate(branches):
            self.modes = dict(before)
            self.conds = conds + ((id(node), index == 0) if len(branches) == 2 else (id(node) * 1000 + index, True),)
            self.periodic = windows + ((node,) if periodic and index == 0 else ())  # type: ignore[operator]
            self._block(body, env)
            if not _ends_the_run(body):  # `else: assert False`, `raise ...`: nothing after the `if` sees this branch
                outcomes.append(self.modes)
        self.conds, self.periodic = conds, windows
        outcomes = outcomes or [before]
        merged = outcomes[0]
        for other in outcomes[1:]:
            merged = _join(merged, other)
        self.modes = merged

    def _loop(self, loop: ast.For | ast.AsyncFor | ast.While, env: Env) -> None:
        parent, recording = self.frame, self.recording
        iter_key = None
        if not isinstance(loop, ast.While):
            iter_key = subst_key(self._unwrap_iter(loop.iter), env.subst)
        frame = Frame(loop, parent, "loop", iter_key)
        frame.entry_conds = self.conds
        if self.track_modes:  # first pass: what does one iteration leave behind?
            entry = dict(self.modes)
            self.recording, self.frame = False, frame
            self._block(loop.body, env)
            self.modes = _join(entry, self.modes)
            self.recording = recording
        if recording:
            self.frames.append(frame)
            if parent is not None:
                parent.children.append(frame)
        self.frame = frame
        entry = dict(self.modes)
        self._block(loop.body, env)
        self.modes = _join(entry, self.modes)
        self.frame = parent

    def _unwrap_iter(self, node: ast.expr) -> ast.expr:
        """``enumerate(tqdm(loader))`` -> ``loader``; the first iterable of ``zip``."""
        while isinstance(node, ast.Call) and node.args:
            name = key_of(node.func) or ""
            if name.split(".")[-1] in ("enumerate", "tqdm", "zip", "iter", "trange", "track", "progress_bar"):
                node = node.args[0]
            else:
                break
        return node

    def _assignment(self, stmt: ast.stmt, env: Env) -> None:
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if isinstance(target, ast.Attribute) and target.attr == "data" and (model := self._updated_model(target, stmt.value, env)) is not None:
                    self._emit(ev.STEP, stmt, model, env, via=ev.MANUAL)  # `p.data = p.data - lr * p.grad`
                if isinstance(target, ast.Attribute) and target.attr == "grad" and isinstance(stmt.value, ast.Constant) and stmt.value.value is None:
                    self._emit(ev.ZERO_GRAD, stmt, None, env, via=None if self._clears_all(target) else ev.PER_TENSOR)
                if isinstance(target, ast.Attribute) and target.attr == "requires_grad" and isinstance(stmt.value, ast.Constant):
                    self._freeze(self._all_parameters_of(target, env), stmt.value.value is False)
                key = subst_key(target, env.subst)
                if isinstance(target, (ast.Tuple, ast.List)) and isinstance(stmt.value, (ast.Tuple, ast.List)) \
                        and len(target.elts) == len(stmt.value.elts):  # `losses, accs = [], []`
                    for element, value in zip(target.elts, stmt.value.elts):
                        if (element_key := subst_key(element, env.subst)) is not None:
                            self._emit(ev.ASSIGN, stmt, element_key, env, arg=value)
                if key is not None:
                    self._emit(ev.ASSIGN, stmt, key, env, arg=stmt.value)
                    role = self.ctx.classify(stmt.value)
                    if role is not None and role.kind == "model":
                        mode = chained_mode(stmt.value)
                        if mode is not None and mode.func.attr == "eval":  # type: ignore[attr-defined]
                            self._set_mode(key, frozenset({("eval", mode)}))
                            self._emit(ev.EVAL, mode, key, env)
                        elif mode is not None or self.ctx.builds_in_train_mode(role):
                            self._set_mode(key, frozenset({"train"}))
                        else:  # a library loader (`from_pretrained` returns eval mode) or a wrapper: not known
                            self._set_mode(key, frozenset({UNKNOWN}))
        elif isinstance(stmt, ast.AugAssign):
            self._emit(ev.AUG, stmt, subst_key(stmt.target, env.subst), env, arg=stmt.value)
            if isinstance(stmt.op, (ast.Sub, ast.Add)) and (model := self._updated_model(stmt.target, stmt.value, env)) is not None:
                self._emit(ev.STEP, stmt, model, env, via=ev.MANUAL)  # `p -= lr * p.grad`

    def _freeze(self, model: str | None, frozen: bool) -> None:
        if model is not None:
            (self.frozen.add if frozen else self.frozen.discard)(model)

    def _all_parameters_of(self, target: ast.Attribute, env: Env) -> str | None:
        """``M`` for ``p.requires_grad = ...`` in ``for p in M.parameters():`` with no ``if`` between, else None."""
        if not self._clears_all(target):
            return None
        return subst_key(self.frame.node.iter.func.value, env.subst)  # type: ignore[union-attr]

    def _updated_model(self, target: ast.expr, value: ast.AST, env: Env) -> str | None:
        """``M`` when ``target`` is ``p`` or ``p.data`` of ``for p in M.parameters():`` and ``value`` reads ``p.grad``:
        a hand-written optimizer step over the model's parameters."""
        loop = self.frame.node if self.frame is not None else None
        if not isinstance(loop, (ast.For, ast.AsyncFor)) or method_name(loop.iter) not in ("parameters", "named_parameters"):
            return None
        param = loop.target.elts[-1] if isinstance(loop.target, ast.Tuple) and loop.target.elts else loop.target
        name = key_of(param)
        if name is None or key_of(target) not in (name, f"{name}.data"):
            return None
        if not any(isinstance(n, ast.Attribute) and n.attr == "grad" and key_of(n.value) == name for n in ast.walk(value)):
            return None
        return subst_key(loop.iter.func.value, env.subst)  # type: ignore[attr-defined]

    def _clears_all(self, target: ast.Attribute) -> bool:
        """``for p in model.parameters(): p.grad = None`` with no ``if`` between: every gradient, not a chosen few."""
        frame = self.frame
        loop = frame.node if frame is not None else None
        if not isinstance(loop, (ast.For, ast.AsyncFor)) or self.conds != frame.entry_conds:  # type: ignore[union-attr]
            return False
        return method_name(loop.iter) in ("parameters",) and key_of(target.value) == key_of(loop.target)

    # -- calls -----------------------------------------------------------------
    def _calls(self, node: ast.AST, env: Env) -> None:
        for call in calls_in_order(node):
            self._call(call, env)

    def _call(self, call: ast.Call, env: Env) -> None:
        if method_name(call) == "requires_grad_":  # `model.requires_grad_(False)`
            off = bool(call.args) and isinstance(call.args[0], ast.Constant) and call.args[0].value is False
            self._freeze(subst_key(call.func.value, env.subst), off)  # type: ignore[attr-defined]
        if method_name(call) in _UPDATES and (model := self._updated_model(call.func.value, call, env)) is not None:  # type: ignore[attr-defined]
            self._emit(ev.STEP, call, model, env, via=ev.MANUAL)  # `p.data.add_(p.grad, alpha=-lr)`
            return
        found = ev.classify(self.ctx, call, env.subst)
        if found is not None:
            kind, key, arg, via = found
            if kind == ev.STEP and isinstance(arg, ast.Name) and arg.id in env.local_defs:
                self._inline(env.local_defs[arg.id], call, env, env.cls, bind=False)
            if kind in (ev.TRAIN, ev.EVAL):
                self._set_mode(key, frozenset({"train"}) if kind == ev.TRAIN else frozenset({("eval", call)}))
            self._emit(kind, call, key, env, arg=arg, via=via)
            return
        target = self._resolve(call, env)
        if target is not None:
            if not self._inline(target[0], call, env, target[1], bind=True):
                self._emit(ev.ESCAPE, call, None, env)  # too deep to follow: it may clear or step anything
            return
        receiver = subst_key(call.func.value, env.subst) if isinstance(call.func, ast.Attribute) else None
        if receiver is not None and receiver.partition(".")[0] in self._holders:
            self._emit(ev.ESCAPE, call, None, env)  # `self.reset_grads()` of a base class we cannot see
        for arg in [*call.args, *(k.value for k in call.keywords)]:
            key = subst_key(arg, env.subst)
            if key is not None and (self.ctx.is_optimizer(key) or self.ctx.is_model(key)):
                self._emit(ev.ESCAPE, call, key, env)
                if self.ctx.is_model(key):
                    self._set_mode(key, frozenset({UNKNOWN}))  # a callable we cannot see may switch its mode

    def _resolve(self, call: ast.Call, env: Env, local: bool = False) -> tuple[Function, str | None] | None:
        """The function a call runs: a nested def, a function or method of this file, or a function of another file
        of the project (walked in its own file's names; ``local`` leaves those out)."""
        func = call.func
        if isinstance(func, ast.Name) and func.id in env.local_defs:
            return env.local_defs[func.id], env.cls
        home = self.ctx.home(env.scope)
        if home is not self.ctx:  # inside another file's helper: its own functions, and what it imports
            if isinstance(func, ast.Name) and func.id in home.functions:
                return home.functions[func.id], None
            return None if local else self._project_function(home, func)
        if isinstance(func, ast.Name):
            if func.id in self.ctx.functions:
                return self.ctx.functions[func.id], None
            return None if local else self._project_function(self.ctx, func)
        if not isinstance(func, ast.Attribute):
            return None
        value = func.value
        cls = None
        if isinstance(value, ast.Name) and value.id == "self":
            cls = env.cls
        elif isinstance(value, ast.Call) and key_of(value.func) in self.ctx.classes:
            cls = key_of(value.func)
        else:
            cls = self.ctx.instances.get(key_of(value) or "")
        if cls is None:  # `engine.train_one_epoch(...)` after `import engine`
            return None if local else self._project_function(self.ctx, func)
        if self.ctx.is_module_class(cls) and func.attr == "forward":
            return None
        method = self._method(cls, func.attr, frozenset())
        return (method, cls) if method is not None else None

    def _project_function(self, home: FileContext, func: ast.expr) -> tuple[Function, None] | None:
        found = self.ctx.project.function(home, func) if self.ctx.project is not None else None
        return (found[1], None) if found is not None else None

    def _method(self, cls: str, name: str, seen: frozenset[str]) -> Function | None:
        if cls in seen or cls not in self.ctx.methods:
            return None
        if name in self.ctx.methods[cls]:
            return self.ctx.methods[cls][name]
        for base in self.ctx.classes[cls].bases:
            found = self._method(key_of(base) or "", name, seen | {cls})
            if found is not None:
                return found
        return None

    @cached_property
    def _holders(self) -> set[str]:
        """First parts of the keys that hold an optimizer (``self`` for ``self.optimizer``): a method called on them
        that the analysis cannot see may clear or step it."""
        return {k.partition(".")[0] for k, r in self.ctx.roles.items() if r.kind == "optimizer" and "." in k}

    def _inline(self, fn: Function, call: ast.Call, env: Env, cls: str | None, bind: bool) -> bool:
        """Walk ``fn`` in place of ``call``; False when it was not followed (recursion, depth, size)."""
        if not self._interesting(fn):
            return True  # nothing in it can be a training event
        if fn in env.stack or len(env.stack) > MAX_DEPTH or self._seq > MAX_EVENTS:
            return False
        subst: dict[str, str] = {}
        if bind:
            params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
            if cls is not None and params and params[0] == "self" and isinstance(call.func, ast.Attribute):
                params = params[1:]
            for param, arg in zip(params, call.args):
                if isinstance(arg, ast.Starred):
                    break
                key = subst_key(arg, env.subst)
                if key is not None:
                    subst[param] = key
            names = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
            for keyword in call.keywords:
                key = subst_key(keyword.value, env.subst)
                if keyword.arg in names and key is not None:
                    subst[keyword.arg] = key
        else:
            subst = dict(env.subst)
        grad = self.grad
        decorated = self._decorated_grad(fn)
        if decorated is not None:
            self.grad = decorated
        site = ev.Site(call, env.scope, fn, bind and cls is not None and isinstance(call.func, ast.Attribute))
        self._block(fn.body, Env(subst, fn, cls, env.stack + (fn,), env.sites + (site,)))
        self.grad = grad
        return True

    # -- state -----------------------------------------------------------------
    def _set_mode(self, key: str | None, value: frozenset) -> None:
        if key is None:
            return
        for known in list(self.modes):
            if known.startswith(key + "."):
                self.modes[known] = value
        self.modes[key] = value

    def mode_of(self, key: str | None) -> frozenset:
        while key:
            if key in self.modes:
                return self.modes[key]
            key = key.rpartition(".")[0]
        return frozenset({UNKNOWN})

    def _emit(self, kind: str, node: ast.AST, key: str | None, env: Env, arg: ast.AST | None = None, via: str | None = None) -> None:
        if not self.recording:
            return
        self._seq += 1
        mode = self.mode_of(key) if kind == ev.FORWARD else frozenset()
        closed = kind == ev.FORWARD and env.scope is not None and sealed(self.ctx, env.scope)
        grad = ev.FROZEN if kind == ev.FORWARD and self.grad is True and self._frozen(key) else self.grad
        event = Event(kind, node, key, self.frame, self._seq, self.conds, self.periodic, grad, mode, arg, via, env.scope, env.subst, closed,
                      env.sites)
        self.events.append(event)
        frame = self.frame
        while frame is not None:
            frame.events.append(event)
            frame = frame.parent

    def _frozen(self, key: str | None) -> bool:
        while key:
            if key in self.frozen:
                return True
            key = key.rpartition(".")[0]
        return False

    # -- queries for rules -----------------------------------------------------
    @cached_property
    def step_frames(self) -> list[Frame]:
        """Innermost loops whose iteration holds both a backward() and an optimizer step."""
        both = [f for f in self.frames if f.kind == "loop" and f.has(ev.BACKWARD) and f.has(ev.STEP)]
        return [f for f in both if not any(c in both for c in self._descendants(f))]

    def _descendants(self, frame: Frame) -> list[Frame]:
        out, todo = [], list(frame.children)
        while todo:
            child = todo.pop()
            out.append(child)
            todo.extend(child.children)
        return out

    def enclosing(self, event: Event, kinds: tuple[str, ...]) -> Frame | None:
        """The innermost frame around ``event`` that holds an event of one of ``kinds`` (climbing out of helper loops such as `for p in params`)."""
        frame = event.frame
        while frame is not None and not any(e.kind in kinds for e in frame.events):
            frame = frame.parent
        return frame


def periodic_ids(event: Event) -> set[int]:
    return {id(node) for node in event.periodic}


def extra_conditions(event: Event, other: Event) -> list[tuple[int, bool]]:
    """Conditions ``event`` sits under that ``other`` does not share."""
    return [c for c in event.conds if c not in other.conds]


def _backward_after(event: Event) -> bool:
    """Whether a backward() follows ``event`` in its iteration or in any enclosing one."""
    frame = event.frame
    while frame is not None:
        if any(b.kind == ev.BACKWARD and b.seq > event.seq and b.grad is not False for b in frame.events):
            return True
        frame = frame.parent
    return False


def validation_forward(event: Event) -> bool:
    """A forward pass whose output no later backward() can use: under no_grad, in a function no graph leaves,
    or with no backward after it."""
    return event.kind == ev.FORWARD and (event.grad is False or event.sealed or not _backward_after(event))


def training_forward(event: Event) -> bool:
    return event.kind == ev.FORWARD and not validation_forward(event)
