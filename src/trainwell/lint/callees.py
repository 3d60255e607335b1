"""Where a call leads: the functions and methods of the project a call runs, and which of them matter.

The loop model (:mod:`trainwell.lint.loops`) walks into what a call runs: a
nested def, a function or method of the same file, or a function of another
file of the checked tree (through :class:`trainwell.lint.index.ProjectIndex`).
This module answers which function that is, which functions nothing calls
(the entry points), and whether walking one can add a training event.
"""

from __future__ import annotations

import ast
from functools import cached_property

from trainwell.lint import events as ev
from trainwell.lint.context import FileContext, key_of, kwarg, method_name
from trainwell.lint.events import grad_of
from trainwell.lint.syntax import walk

MAX_DEPTH = 4
_EVENT_METHODS = {"backward", "zero_grad", "step", "eval", "train", "clip_grad_norm_", "clip_grad_value_", "unscale_",
                  "requires_grad_", "manual_backward", "load_state_dict", "zero_", "forward"}
Function = ast.FunctionDef | ast.AsyncFunctionDef


class Env:
    """Where the walk is: the renaming of parameters, the function and class it is in."""

    __slots__ = ("subst", "scope", "cls", "stack", "sites")

    def __init__(self, subst: dict[str, str], scope: ast.AST, cls: str | None, stack: tuple[ast.AST, ...],
                 sites: tuple[ev.Site, ...] = ()) -> None:
        self.subst = subst
        self.scope = scope
        self.cls = cls
        self.stack = stack
        self.sites = sites  # the calls that inlined this function, outermost first


def _keeps_an_argument(ctx: FileContext, fn: ast.AST) -> bool:
    """Whether ``fn`` stores one of its arguments where it outlives the call (``self.values.append(value)``,
    ``history.append(loss)`` into a list it was handed or a module-level one, ``self.total += value``): a meter or a
    recorder, whose stores the rules must see. A list the function makes itself dies with the call."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    stores = [node for node in ctx.members_of(fn, ast.Call, ast.AugAssign)
              if method_name(node) in ev.STORES or isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Attribute)]
    if not stores:
        return False  # most functions: nothing below needs the names they bind
    params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
    declared = {name for n in ctx.members_of(fn, ast.Global, ast.Nonlocal) for name in n.names}  # type: ignore[attr-defined]
    local = {n.id for n in ctx.members_of(fn, ast.Name) if isinstance(n.ctx, (ast.Store, ast.Del))} - declared  # type: ignore[attr-defined]

    def holder(key: str | None) -> bool:  # a parameter, the instance, or a name of the module (or enclosing function)
        head = (key or "").partition(".")[0]
        return bool(head) and (head in params or head == "self" or head not in local)

    for node in stores:
        if isinstance(node, ast.Call) and holder(key_of(node.func.value)):  # type: ignore[attr-defined]
            stored = node.args
        elif isinstance(node, ast.AugAssign) and holder(key_of(node.target)):
            stored = [node.value]
        else:
            continue
        if any(isinstance(n, ast.Name) and n.id in params - {"self"} for a in stored for n in walk(a)):
            return True
    return False


class Callees:
    """Call resolution for :class:`trainwell.lint.loops.Analysis` (mixed in)."""

    ctx: FileContext
    _callees: dict[int, list[ast.AST]]
    _memo: dict[int, bool]

    def _called_functions(self) -> set[ast.AST]:
        called: set[ast.AST] = set()
        scopes: list[tuple[ast.AST, str | None]] = [(self.ctx.tree, None)]
        scopes += [(fn, None) for fn in self.ctx.functions.values()]
        scopes += [(fn, cls) for cls, ms in self.ctx.methods.items() for fn in ms.values()]
        for scope, cls in scopes:
            env = Env({}, scope, cls, (scope,))
            for node in self.ctx.members_of(scope, ast.Call):
                if isinstance(node, ast.Call):
                    target = self._resolve(node, env, local=True)
                    if target is not None and target[0] is not scope:
                        called.add(target[0])
                        self._callees.setdefault(id(scope), []).append(target[0])
        return called

    def _local_defs(self, scope: ast.AST) -> dict[str, Function]:
        """The functions defined in ``scope``'s own statements, also inside its loops, ``if``s and ``with``s (an LBFGS
        ``closure`` defined in the batch loop), not inside its nested functions or classes; the first by line wins."""
        found = self._defs.get(id(scope))
        if found is None:
            defs = sorted(self.ctx.members_of(scope, ast.FunctionDef, ast.AsyncFunctionDef), key=lambda f: f.lineno, reverse=True)
            found = self._defs[id(scope)] = {f.name: f for f in defs}  # type: ignore[attr-defined]
        return found

    def _engine_steps(self) -> list[Function]:
        """The training steps handed to Ignite's ``Engine(fn)`` (also a closure of a ``create_trainer`` factory): the
        engine's ``run(data, max_epochs)`` calls each once per batch, so its body is one iteration of a loop."""
        if "Engine" not in self.ctx.source:
            return []
        found: list[Function] = []
        ignite = {name for name, full in self.ctx.imports.items() if full.partition(".")[0] == "ignite"}  # a callee's name starts with one
        for call in self.ctx.calls:
            if (key_of(call.func) or "").partition(".")[0] not in ignite:  # type: ignore[attr-defined]
                continue
            qual = self.ctx.call_name(call) or ""
            if not qual.startswith("ignite.") or qual.rsplit(".", 1)[-1] != "Engine":
                continue
            given = call.args[0] if call.args else kwarg(call, "process_function")
            if isinstance(given, ast.Name):
                fn = self._local_defs(self.ctx.scope_of(call)).get(given.id) or self.ctx.functions.get(given.id)
                if fn is not None and fn not in found and len(fn.args.posonlyargs + fn.args.args) >= 2 and self._backpropagates(fn):
                    found.append(fn)  # a training step (an RL timestep that only acts is left to the handlers we cannot place)
        return found

    def _interesting(self, fn: ast.AST, seen: frozenset = frozenset()) -> bool:
        """Whether inlining ``fn`` can add a training event (directly or through the helpers it calls)."""
        if id(fn) in self._memo:
            return self._memo[id(fn)]
        home = self.ctx.home(fn)  # a method of another file's class: its `self.G` is known there
        found = any(
            method_name(n) in _EVENT_METHODS or self.ctx.role(key_of(n.func)) is not None  # type: ignore[attr-defined]
            or (home is not self.ctx and home.role(key_of(n.func)) is not None)  # type: ignore[attr-defined]
            for n in self.ctx.members_of(fn, ast.Call)
        ) or any(n.attr in ("grad", "requires_grad") for n in self.ctx.members_of(fn, ast.Attribute)) \
            or _keeps_an_argument(self.ctx, fn) or any(c not in seen and self._interesting(c, seen | {fn}) for c in self._callees.get(id(fn), [])) \
            or any(c not in seen and self._interesting(c, seen | {fn}) for c in self._project_callees(fn))
        for nested in (n for n in getattr(fn, "body", []) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
            found = found or self._interesting(nested, seen | {fn})
        self._memo[id(fn)] = found
        return found

    def _backpropagates(self, fn: ast.AST, seen: frozenset = frozenset()) -> bool:
        """Whether ``fn`` calls ``backward()`` itself or through the helpers it calls."""
        memo = self.__dict__.setdefault("_backpropagates_memo", {})
        if id(fn) not in memo:
            memo[id(fn)] = any(method_name(n) == "backward" for n in self.ctx.members_of(fn, ast.Call)) \
                or any(c not in seen and self._backpropagates(c, seen | {fn}) for c in [*self._callees.get(id(fn), []), *self._project_callees(fn)])
        return memo[id(fn)]

    def _project_callees(self, fn: ast.AST) -> list[Function]:
        """Functions of other files of the project that ``fn`` calls by an imported name (``train_step(...)`` after
        ``from engine import train_step``), and methods of instances of their classes (``trainer.fit()``): a
        per-batch helper there may hold the whole step."""
        project = self.ctx.project
        if project is None:
            return []
        home = self.ctx.home(fn)
        imported = home.imports.keys() | home.relative_imports.keys()
        found = []
        instances = self.ctx.project_instances if home is self.ctx else {}
        for node in self.ctx.members_of(fn, ast.Call):
            if (key_of(node.func) or "").partition(".")[0] in imported:  # type: ignore[attr-defined]
                target = project.function(home, node.func)  # type: ignore[attr-defined]
                if target is not None:
                    found.append(target[1])
            if isinstance(node.func, ast.Attribute) and key_of(node.func.value) in instances:  # type: ignore[attr-defined]
                file, cls, _ = instances[key_of(node.func.value)]  # type: ignore[index]
                method = self._method(cls.name, node.func.attr, frozenset(), file)
                if method is not None:
                    found.append(method)  # `trainer.fit()` with `trainer = Trainer(...)` of another file
        return found

    @cached_property
    def _command_line(self) -> set[int]:
        """The functions ``fire.Fire()`` runs from the command line (a bare ``fire.Fire()``: every top-level function of
        the file; else the one named, or those of a dict): entry points called with autograd on, as PyTorch starts."""
        found: set[int] = set()
        for call in self.ctx.calls:
            if self.ctx.call_name(call) != "fire.Fire":
                continue
            component = call.args[0] if call.args else kwarg(call, "component")
            if component is None:
                found |= {id(fn) for fn in self.ctx.functions.values()}
            for name in ([component] if isinstance(component, ast.Name) else component.values if isinstance(component, ast.Dict) else []):
                if isinstance(name, ast.Name) and name.id in self.ctx.functions:
                    found.add(id(self.ctx.functions[name.id]))
        return found

    def _entry_grad(self, fn: Function) -> bool | None:
        """Autograd at the start of an entry point: its decorator's, on for a command-line function, else unknown."""
        grad = self._decorated_grad(fn)
        return True if grad is None and id(fn) in self._command_line else grad

    def _decorated_grad(self, fn: Function) -> bool | None:
        for decorator in fn.decorator_list:
            grad = grad_of(self.ctx, decorator)
            if grad is not None:
                return grad
        return None

    def _resolve(self, call: ast.Call, env: Env, local: bool = False) -> tuple[Function, str | None] | None:
        """The function a call runs: a nested def, a function or method of this file, or a function of another file
        of the project (walked in its own file's names; ``local`` leaves those out)."""
        func = call.func
        if isinstance(func, ast.Name) and func.id in (defs := self._local_defs(env.scope)):
            return defs[func.id], env.cls
        home = self.ctx.home(env.scope)
        if home is not self.ctx:  # inside another file's helper: its own functions, its class's methods, what it imports
            if isinstance(func, ast.Name) and func.id in home.functions:
                return home.functions[func.id], None
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self" and env.cls:
                method = self._method(env.cls, func.attr, frozenset(), home)
                return (method, env.cls) if method is not None and not (home.is_module_class(env.cls) and func.attr == "forward") else None
            return None if local else self._project_function(home, func)
        if isinstance(func, ast.Name):
            if func.id in self.ctx.functions:
                return self.ctx.functions[func.id], None
            return None if local else self._project_function(self.ctx, func)
        if isinstance(func, ast.Subscript):
            return self._registered(func, env)
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
            instance = self.ctx.project_instances.get(key_of(value) or "") if cls is None and not local else None
            if instance is not None:  # `trainer.train(...)` with `trainer = Trainer(...)` of another file
                method = self._method(instance[1].name, func.attr, frozenset(), instance[0])
                return (method, instance[1].name) if method is not None else None
        if cls is None:  # `engine.train_one_epoch(...)` after `import engine`
            return None if local else self._project_function(self.ctx, func)
        if self.ctx.is_module_class(cls) and func.attr == "forward":
            return None
        method = self._method(cls, func.attr, frozenset())
        return (method, cls) if method is not None else None

    def _registered(self, func: ast.Subscript, env: Env) -> tuple[Function, str | None] | None:
        """The function a callback table holds: ``self.callbacks["on_batch_end"](self)`` in a class whose method
        ``set_callback(self, event, fn)`` stores ``self.callbacks[event] = fn``, given the one function of this file
        registered under that name (``trainer.set_callback("on_batch_end", validate)``)."""
        table = key_of(func.value) or ""
        if env.cls is None or not table.startswith("self.") or env.cls not in self.ctx.methods:
            return None
        wanted = func.slice.value if isinstance(func.slice, ast.Constant) else None
        cache = self.__dict__.setdefault("_callback_tables", {})
        if (env.cls, table) not in cache:
            cache[(env.cls, table)] = self._registrations(env.cls, table)
        found = [fn for event, fn in cache[(env.cls, table)] if wanted is None or event is None or event == wanted]
        return (found[0], None) if len(set(map(id, found))) == 1 else None

    def _registrations(self, cls: str, table: str) -> list[tuple[object, Function]]:
        """(the constant name or None, the function) for every registration into the callback table ``table``."""
        found: list[tuple[object, Function]] = []
        for name, method in self.ctx.methods[cls].items():
            params = [a.arg for a in method.args.args[1:]]
            for node in walk(method):
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(target := node.targets[0], ast.Subscript) \
                        and key_of(target.value) == table and isinstance(target.slice, ast.Name) and isinstance(node.value, ast.Name) \
                        and target.slice.id in params and node.value.id in params:
                    event_at, fn_at = params.index(target.slice.id), params.index(node.value.id)
                    for call in self.ctx.calls:
                        if method_name(call) == name and len(call.args) > max(event_at, fn_at) and isinstance(fn := call.args[fn_at], ast.Name) \
                                and fn.id in self.ctx.functions:
                            event = call.args[event_at]
                            found.append((event.value if isinstance(event, ast.Constant) else None, self.ctx.functions[fn.id]))
        return found

    def _project_function(self, home: FileContext, func: ast.expr) -> tuple[Function, None] | None:
        found = self.ctx.project.function(home, func) if self.ctx.project is not None else None
        return (found[1], None) if found is not None else None

    def _method(self, cls: str, name: str, seen: frozenset[str], home: FileContext | None = None) -> Function | None:
        """The method ``name`` of the class ``cls`` of ``home`` (this file by default), or of a base class there."""
        home = home or self.ctx
        if cls in seen or cls not in home.methods:
            return None
        if name in home.methods[cls]:
            return home.methods[cls][name]
        for base in home.classes[cls].bases:
            found = self._method(key_of(base) or "", name, seen | {cls}, home)
            if found is not None:
                return found
        return None

    def _may_reach_optimizer(self, call: ast.Call, receiver: str, env: Env) -> bool:
        """Whether a method we cannot see, called on ``receiver`` (``self.reset_grads()``, ``self.writer.add_scalar()``)
        may reach the optimizer its holder keeps: always on the holder itself; on one of its attributes only when some
        value stored there may hold it (a call given ``self``, a parameter or a model or optimizer, an alias, or
        nothing we can see). ``self.writer = SummaryWriter(log_dir)`` cannot."""
        head, _, rest = receiver.partition(".")
        if not rest:
            return True
        attr = rest.partition(".")[0]
        raw = key_of(call.func.value) if isinstance(call.func, ast.Attribute) else None  # type: ignore[attr-defined]
        files = [(self.ctx, {f"{head}.{attr}"})]
        home = self.ctx.home(env.scope)
        if raw is not None and raw.startswith("self.") and home is not self.ctx:
            files.append((home, {f"self.{attr}"}))  # a method of another file's class, walked from this one
        values = [(file, a) for file, keys in files for a in file.assignments_to(keys)]
        if not values:
            return True
        for file, assign in values:
            value = assign.value
            if not isinstance(value, ast.Call):
                return True
            scope = file.parents.get(id(assign))  # the function whose own body holds the assignment, if any
            scope = scope if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
            params = {a.arg for a in scope.args.args + scope.args.kwonlyargs} if scope is not None else set()
            for node in walk(value):
                key = key_of(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
                if key is None:
                    continue
                if key.partition(".")[0] in params | {"self"} or (file is self.ctx and (self.ctx.is_model(key) or self.ctx.is_optimizer(key))):
                    return True
        return False

    @cached_property
    def _holders(self) -> set[str]:
        """First parts of the keys that hold an optimizer (``self`` for ``self.optimizer``): a method called on them
        that the analysis cannot see may clear or step it."""
        return {k.partition(".")[0] for k, r in self.ctx.roles.items() if r.kind == "optimizer" and "." in k}
