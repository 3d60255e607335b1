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

from trainwell.lint import events as ev
from trainwell.lint.callees import MAX_DEPTH, Callees, Env, Function
from trainwell.lint.context import FileContext, key_of, method_name, walk
from trainwell.lint.dataflow import closed_call, scope_nodes, sealed
from trainwell.lint.events import Event, Frame, calls_in_order, chained_mode, grad_of, is_periodic, subst_key, unwrap_iter
from trainwell.lint.iteration import Queries
from trainwell.lint.modes import UNKNOWN, ModeState, join
from trainwell.lint.ownership import Ownership

MAX_EVENTS = 50_000
_UPDATES = {"add_", "sub_", "copy_", "addcdiv_", "addcmul_"}  # in-place updates of a parameter from its gradient


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


def _stored_names(ctx: FileContext, stmt: ast.stmt) -> list[ast.Name]:
    """The names ``stmt`` itself stores to (a compound statement: its loop target or ``as`` names only)."""
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        targets: list[ast.AST] = [stmt.target]
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        targets = [i.optional_vars for i in stmt.items if i.optional_vars is not None]
    elif isinstance(stmt, (ast.If, ast.While, ast.Try, ast.Match)) or type(stmt).__name__ == "TryStar":
        return []
    else:
        return ctx.home(stmt).stored_names(stmt)
    return [node for target in targets for node in walk(target) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)]


class Analysis(Callees, Queries, Ownership, ModeState):
    """Frames (loops) and events of one file, built once and shared by the rules."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.frames: list[Frame] = []
        self.events: list[Event] = []
        self.modes: dict[str, frozenset] = {}
        self.ran: dict[str, frozenset] = {}  # the modes on the runs where every loop ran (trainwell.lint.modes)
        self.recording = True
        self.frame: Frame | None = None
        self.conds: tuple[tuple[int, bool], ...] = ()
        self.periodic: tuple[ast.If, ...] = ()
        self.ends: tuple[tuple[int, bool], ...] = ()  # the branches being walked that end the run
        self.tests: tuple[tuple[ast.If, bool], ...] = ()  # the `if` branches being walked
        self.grad: bool | None = True
        self.frozen: set[str] = set()  # models whose parameters were all set `requires_grad = False` (or loaded frozen) along the walk
        self.bound: set[str] = set()  # names bound so far along the walk (parameters, assignments, loop targets)
        self._seq = 0
        self.track_modes = ".eval(" in ctx.source or ".train(" in ctx.source
        self._callees: dict[int, list[ast.AST]] = {}
        self._defs: dict[int, dict[str, Function]] = {}  # scope -> its local defs (Callees._local_defs)
        self._memo: dict[int, bool] = {}
        self._optimizer_models: dict[str | None, set[str]] = {}
        self._ordered: dict[ast.AST, list[ast.Call]] = {}  # node -> calls_in_order(node)
        self._stores: dict[ast.stmt, list[ast.Name]] = {}  # statement -> _stored_names(statement)
        self._build()

    # -- entry points --------------------------------------------------------
    def _build(self) -> None:
        called = self._called_functions()
        engines = self._engine_steps()
        if self._interesting(self.ctx.tree):
            self._entry(self.ctx.tree, self.ctx.tree.body, None, True)
        for fn in self.ctx.functions.values():
            if fn not in called and fn not in engines and self._interesting(fn):
                self._entry(fn, fn.body, None, self._entry_grad(fn))
        for cls, methods in self.ctx.methods.items():
            module = self.ctx.is_module_class(cls)
            for fn in methods.values():
                if module and not self._steps_its_optimizer(fn):
                    continue  # a module's own methods run inside forward passes we cannot place
                if fn not in called and fn not in engines and fn.name != "__init__" and self._interesting(fn):
                    self._entry(fn, fn.body, cls, self._decorated_grad(fn))
        for fn in engines:
            if self._interesting(fn):
                self._engine_entry(fn)

    def _engine_entry(self, fn: Function) -> None:
        """An Ignite process function ``step(engine, batch)`` walked as the body of ``for batch in engine:``: the
        loop its engine runs (a node made here, placed at the ``def``), with autograd on unless it is decorated."""
        params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
        loop = ast.For(target=ast.Name(params[1], ast.Store()), iter=ast.Name(params[0], ast.Load()), body=fn.body, orelse=[])
        for node in (loop, loop.target, loop.iter):
            ast.copy_location(node, fn)
        grad = self._decorated_grad(fn)
        self._entry(fn, [loop], None, True if grad is None else grad)

    def _steps_its_optimizer(self, fn: Function) -> bool:
        """Whether a method of a module class steps an optimizer (``self.opt.step()`` with ``self.opt =
        Adam(self.parameters())``): a training routine of its own, not a part of a forward pass."""
        return fn.name != "forward" and any(
            isinstance(n, ast.Call) and method_name(n) == "step" and self.ctx.is_optimizer(key_of(n.func.value))  # type: ignore[attr-defined]
            for n in scope_nodes(self.ctx, fn))

    def _entry(self, scope: ast.AST, body: list[ast.stmt], cls: str | None, grad: bool | None) -> None:
        frame = Frame(scope, None, "body")
        self.frames.append(frame)
        self.frame, self.conds, self.periodic, self.ends, self.tests, self.grad, self.modes = frame, (), (), (), (), grad, {}
        self.ran = {}
        self.frozen = set()
        arguments = getattr(scope, "args", None)
        self.bound = {a.arg for a in (walk(arguments) if arguments is not None else []) if isinstance(a, ast.arg)}
        self._block(body, Env({}, scope, cls, (scope,)))

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
        self._bind(stmt, env)

    def _bind(self, stmt: ast.stmt, env: Env) -> None:
        """Record the names ``stmt`` binds (not inside the blocks of a compound statement: those bind as they are walked)."""
        stores = self._stores.get(stmt)
        if stores is None:  # a loop body is walked twice, a helper once per call site: find its stored names once
            stores = self._stores[stmt] = _stored_names(self.ctx, stmt)
        for node in stores:
            if key := subst_key(node, env.subst):
                self.bound.add(key)

    def _branches(self, node: ast.AST, branches: list[tuple[list[ast.stmt], bool]], env: Env, periodic: bool) -> None:
        conds, windows, ends, tests, before, bound = self.conds, self.periodic, self.ends, self.tests, self.modes, self.bound
        before_ran, outcomes_ran = self.ran, []
        outcomes, binds = [], []
        frozen_before, frozen_after = self.frozen, []
        for index, (body, _) in enumerate(branches):
            self.modes, self.bound, self.ran, self.frozen = dict(before), set(bound), dict(before_ran), set(frozen_before)
            cond = (id(node), index == 0) if len(branches) == 2 else (id(node) * 1000 + index, True)
            self.conds = conds + (cond,)
            self.periodic = windows + ((node,) if periodic and index == 0 else ())  # type: ignore[operator]
            self.ends = ends + ((cond,) if _ends_the_run(body) else ())
            self.tests = tests + (((node, index == 0),) if isinstance(node, ast.If) else ())  # type: ignore[operator]
            self._block(body, env)
            if not _ends_the_run(body):  # `else: assert False`, `raise ...`: nothing after the `if` sees this branch
                frozen_after.append(self.frozen)
                outcomes.append(self.modes)
                outcomes_ran.append(self.ran)
                binds.append(self.bound)
        self.conds, self.periodic, self.ends, self.tests = conds, windows, ends, tests
        self.bound = set(bound).union(*binds)
        self.frozen = set.intersection(*frozen_after) if frozen_after else frozen_before  # frozen on every path only
        if not outcomes:
            self.modes, self.ran = before, before_ran
            return
        self._merge_modes(node, outcomes, outcomes_ran, binds, before, before_ran, bound)

    def _loop(self, loop: ast.For | ast.AsyncFor | ast.While, env: Env) -> None:
        parent, recording = self.frame, self.recording
        iter_key = None
        if not isinstance(loop, ast.While):
            iter_key = subst_key(unwrap_iter(loop.iter), env.subst)
        frame = Frame(loop, parent, "loop", iter_key)
        frame.entry_conds = self.conds
        # First pass: what does one iteration leave behind? Only where events are recorded: inside another loop's first
        # pass the walk below is that pass (a mode either set in the body or kept from the entry: one pass is the join).
        if self.track_modes and recording:
            entry, entry_ran = dict(self.modes), dict(self.ran)
            self.recording, self.frame = False, frame
            self._block(loop.body, env)
            self.modes, self.ran = join(entry, self.modes), join(entry_ran, self.ran)
            self.recording = recording
        if recording:
            self.frames.append(frame)
            if parent is not None:
                parent.children.append(frame)
        self.frame = frame
        entry = dict(self.modes)
        self._block(loop.body, env)
        self.modes = join(entry, self.modes)  # `self.ran` keeps the end of an iteration: the loop ran
        self.frame = parent

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
                    if role is not None and role.kind == "model" and (frozen := self.ctx.loads_frozen(stmt.value)) is not None:
                        self._freeze(key, frozen)  # `PeftModel.from_pretrained(base, path)`: adapters loaded for inference
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
        if model is None:
            return
        if frozen:
            self.frozen.add(model)
        else:  # `model.fc.requires_grad_(True)` after freezing `model`: neither is all frozen any more
            self.frozen -= {k for k in self.frozen if k == model or model.startswith(k + ".")}

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
        if not any(isinstance(n, ast.Attribute) and n.attr == "grad" and key_of(n.value) == name for n in walk(value)):
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
        ordered = self._ordered.get(node)  # a loop body is walked twice, a helper once per call site: order its calls once
        if ordered is None:
            ordered = self._ordered[node] = calls_in_order(node)
        for call in ordered:
            self._call(call, env)

    def _call(self, call: ast.Call, env: Env) -> None:
        if method_name(call) == "requires_grad_":  # `model.requires_grad_(False)`
            off = bool(call.args) and isinstance(call.args[0], ast.Constant) and call.args[0].value is False
            self._freeze(subst_key(call.func.value, env.subst), off)  # type: ignore[attr-defined]
        if method_name(call) in _UPDATES and (model := self._updated_model(call.func.value, call, env)) is not None:  # type: ignore[attr-defined]
            self._emit(ev.STEP, call, model, env, via=ev.MANUAL)  # `p.data.add_(p.grad, alpha=-lr)`
            return
        receiver = key_of(call.func.value) if isinstance(call.func, ast.Attribute) else None
        if receiver is not None and self._only_an_instance(receiver):
            target = self._resolve(call, env)  # `optimizer.zero_grad()` of a wrapper class whose method we can read
            if target is not None:
                if not self._inline(target[0], call, env, target[1], bind=True):
                    self._emit(ev.ESCAPE, call, None, env)
                return
        found = ev.classify(self.ctx, call, env.subst)
        if found is not None:
            kind, key, arg, via = found
            if kind == ev.STEP and isinstance(arg, ast.Name) and arg.id in (defs := self._local_defs(env.scope)):
                self._inline(defs[arg.id], call, env, env.cls, bind=False)
            if kind in (ev.TRAIN, ev.EVAL):
                chosen = kind == ev.EVAL or not call.args or isinstance(call.args[0], ast.Constant)  # not `model.train(is_training)`
                mode = frozenset({"train"}) if kind == ev.TRAIN else frozenset({("eval", call)})
                self._set_mode(key, mode if chosen else frozenset({UNKNOWN}))
            self._emit(kind, call, key, env, arg=arg, via=via)
            return
        target = self._resolve(call, env)
        if target is not None:
            if not self._inline(target[0], call, env, target[1], bind=True):
                self._emit(ev.ESCAPE, call, None, env)  # too deep to follow: it may clear or step anything
            return
        receiver = subst_key(call.func.value, env.subst) if isinstance(call.func, ast.Attribute) else None
        if receiver is not None and receiver.partition(".")[0] in self._holders and self._may_reach_optimizer(call, receiver, env):
            self._emit(ev.ESCAPE, call, None, env)  # `self.reset_grads()` of a base class we cannot see
        if (self.ctx.call_name(call) or key_of(call.func)) in ev.READ_ONLY:
            return  # `torch.save(model, path)` keeps the mode it was in
        for arg in [*call.args, *(k.value for k in call.keywords)]:
            key = subst_key(arg, env.subst)
            if key is not None and (self.ctx.is_optimizer(key) or self.ctx.is_model(key)):
                self._emit(ev.ESCAPE, call, key, env)
                if self.ctx.is_model(key):
                    self._set_mode(key, frozenset({UNKNOWN}))  # a callable we cannot see may switch its mode

    def _only_an_instance(self, key: str) -> bool:
        """Whether ``key`` only ever holds an instance of one class of another file of the tree (assigned once, from
        that class): its methods run with ``self`` bound to it, whatever their names say (an optimizer wrapper's
        ``zero_grad()`` clears ``key.optimizer``). A local class's instance keeps the name-based reading: its
        methods' ``self.x`` are not renamed, so a wrapper's own key is what its step and clear are matched on."""
        return key in self.ctx.project_instances

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
                receiver = subst_key(call.func.value, env.subst)
                if self.ctx.home(fn) is not self.ctx and receiver is not None:
                    subst["self"] = receiver  # a class of another file: its `self.x` is the caller's `trainer.x`
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
        method = bind and cls is not None and isinstance(call.func, ast.Attribute)
        closed = bind and not method and self._backpropagates(fn) and closed_call(self.ctx, call, env.scope, fn, env.sites)
        site = ev.Site(call, env.scope, fn, method, closed)
        self._block(fn.body, Env(subst, fn, cls, env.stack + (fn,), env.sites + (site,)))
        self.grad = grad
        return True

    # -- state -----------------------------------------------------------------
    def _emit(self, kind: str, node: ast.AST, key: str | None, env: Env, arg: ast.AST | None = None, via: str | None = None) -> None:
        if not self.recording:
            return
        self._seq += 1
        mode = self.mode_of(key) if kind == ev.FORWARD else frozenset()
        closed = kind == ev.FORWARD and env.scope is not None and sealed(self.ctx, env.scope)
        grad = ev.FROZEN if kind == ev.FORWARD and self.grad in (True, None) and self._frozen(key) else self.grad
        event = Event(kind, node, key, self.frame, self._seq, self.conds, self.periodic, grad, mode, arg, via, env.scope, env.subst, closed,
                      env.sites, self.ends, self.tests, self.mode_of(key, self.ran) if kind == ev.FORWARD else frozenset())
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

