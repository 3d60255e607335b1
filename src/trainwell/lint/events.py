"""The events of one training iteration and how a call is recognised as one.

An event is something a rule reasons about: ``zero_grad``, a forward pass, a
loss, ``backward``, ``unscale_``, a clip, an optimizer or scheduler step, a
mode switch. Each carries the key it acts on, after the names of an inlined
helper's parameters were replaced by the caller's arguments.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from trainwell.lint.context import FileContext, key_of, kwarg, method_name, walk

ZERO_GRAD = "zero_grad"
BACKWARD = "backward"
STEP = "step"
SCHED_STEP = "scheduler_step"
UNSCALE = "unscale"
CLIP = "clip"
FORWARD = "forward"
LOSS = "loss"
TRAIN = "train"
EVAL = "eval"
SYNC = "sync"
APPEND = "append"
AUG = "augassign"
ASSIGN = "assign"
ESCAPE = "escape"  # an optimizer or model handed to a call we cannot see into
# callables that read a model and leave it as it was (its mode, its gradients, its parameters): handing a model to
# them hides nothing
READ_ONLY = {"torch.save", "print", "len", "str", "repr", "id", "type", "isinstance", "hasattr", "vars"}
# Event.grad: True (autograd on by default), False (no_grad / inference_mode), None (a helper whose callers we
# cannot see), ENABLED (switched on on purpose: `torch.enable_grad()`, gradients with respect to inputs).
ENABLED = "enabled"
# Event.via of a STEP written by hand (`p.data.add_(p.grad, alpha=-lr)`, `p -= lr * p.grad` over `model.parameters()`):
# its key is the model whose parameters it updates.
MANUAL = "manual"
# Event.grad of a FORWARD of a model whose every parameter was set `requires_grad = False` first (the idiom from
# before `no_grad`), or that was loaded frozen (PEFT's `PeftModel.from_pretrained` without `is_trainable=True`):
# autograd is on (or may be), yet the pass builds no graph from the model's weights.
FROZEN = "frozen"
# Event.via of a ZERO_GRAD that clears tensors one by one (`p.grad = None`, `p.grad.zero_()`, a helper): it may
# clear only some of them on purpose (a frozen layer), so it silences TW101 but never proves TW102.
PER_TENSOR = "per-tensor"

FUNCTIONAL_LOSSES = {
    "cross_entropy": "CrossEntropyLoss", "nll_loss": "NLLLoss", "binary_cross_entropy_with_logits": "BCEWithLogitsLoss",
    "binary_cross_entropy": "BCELoss", "mse_loss": "MSELoss", "l1_loss": "L1Loss", "smooth_l1_loss": "SmoothL1Loss",
    "kl_div": "KLDivLoss", "huber_loss": "HuberLoss",
}
STORES = {"append", "extend", "appendleft"}  # container methods that keep their argument
_CLIPS = {"clip_grad_norm_", "clip_grad_value_", "clip_grad_norm"}
_SYNCS = {"item", "cpu", "numpy", "tolist"}


@dataclass(eq=False)
class Frame:
    """One loop (or one entry function's body) and the events of one of its iterations."""

    node: ast.AST
    parent: Frame | None
    kind: str  # "loop" or "body"
    iter_key: str | None = None
    events: list[Event] = field(default_factory=list)
    children: list[Frame] = field(default_factory=list)
    entry_conds: tuple[tuple[int, bool], ...] = ()  # the `if` branches the loop itself sits in

    def has(self, kind: str) -> bool:
        return any(e.kind == kind for e in self.events)

    def of(self, kind: str) -> list[Event]:
        return [e for e in self.events if e.kind == kind]


@dataclass(frozen=True, eq=False)
class Site:
    """One call the walk followed into a function of the project: ``caller`` holds ``call``; ``method`` when the
    callee's first parameter is the receiver (``meter.update(loss)`` runs ``update(self, value)``); ``closed`` when
    no graph the caller built can reach the callee (:func:`trainwell.lint.dataflow.closed_call`)."""

    call: ast.Call
    caller: ast.AST | None
    callee: ast.AST
    method: bool = False
    closed: bool = False


@dataclass(eq=False)
class Event:
    """One thing that happens at one place of one iteration."""

    kind: str
    node: ast.AST
    key: str | None
    frame: Frame | None
    seq: int
    conds: tuple[tuple[int, bool], ...] = ()
    periodic: tuple[ast.If, ...] = ()  # enclosing `if step % k == 0` windows
    grad: bool | str | None = True
    mode: frozenset = frozenset()
    arg: ast.AST | None = None
    via: str | None = None  # "scaler" for scaler.scale(loss).backward() / scaler.step(opt)
    scope: ast.AST | None = None  # the function (or module) whose body holds ``node``
    subst: dict[str, str] = field(default_factory=dict)
    sealed: bool = False  # a FORWARD in a function that no graph can leave (dataflow.sealed): evaluation
    sites: tuple[Site, ...] = ()  # the calls that inlined ``scope``, outermost first (empty: an entry point)
    ends: tuple[tuple[int, bool], ...] = ()  # the branches around it that end the run (`sys.exit()`, `raise`): nothing after them runs
    tests: tuple[tuple[ast.If, bool], ...] = ()  # the `if` statements around it and the branch it is in (True: the body)
    ran: frozenset = frozenset()  # a FORWARD's model mode on the runs where every loop before it ran (Analysis.ran)

    @property
    def line(self) -> int:
        return self.node.lineno  # type: ignore[attr-defined]

    @property
    def entry_line(self) -> int:
        """The line of the entry point's statement that leads here: the outermost call that inlined the helper, else
        the event's own line. Module-level code above it has run (a notebook's earlier cells); code below has not."""
        return self.sites[0].call.lineno if self.sites else self.line

    def compatible(self, other: Event) -> bool:
        """False when the two sit in different branches of one ``if``."""
        mine = dict(self.conds)
        return all(mine.get(node, branch) == branch for node, branch in other.conds)

    def inside(self, frame: Frame) -> bool:
        current = self.frame
        while current is not None:
            if current is frame:
                return True
            current = current.parent
        return False


def subst_key(node: ast.AST | None, subst: dict[str, str]) -> str | None:
    key = key_of(node)
    if key is None:
        return None
    head, dot, rest = key.partition(".")
    if head in subst:
        return subst[head] + dot + rest
    return key


def is_clip(call: ast.Call) -> bool:
    name = method_name(call) or (call.func.id if isinstance(call.func, ast.Name) else None)
    return name in _CLIPS


def loss_class(ctx: FileContext, call: ast.Call, key: str | None) -> str | None:
    """``CrossEntropyLoss`` for ``criterion(...)`` (an instance) or ``F.cross_entropy(...)``."""
    role = ctx.role(key)
    if role is not None and role.kind == "loss":
        return role.cls
    qual = ctx.call_name(call) or ""
    last = qual.rsplit(".", 1)[-1]
    if qual.startswith("torch") and last in FUNCTIONAL_LOSSES:
        return FUNCTIONAL_LOSSES[last]
    return None


def classify(ctx: FileContext, call: ast.Call, subst: dict[str, str]) -> tuple[str, str | None, ast.AST | None, str | None] | None:
    """(kind, key, arg, via) when ``call`` is a training event, else None."""
    name = method_name(call)
    func = call.func
    if name is not None:
        receiver = func.value  # type: ignore[attr-defined]
        raw = key_of(receiver)
        key = subst_key(receiver, subst)
        if name == "zero_grad":
            return ZERO_GRAD, key, None, None
        if name == "zero_" and isinstance(receiver, ast.Attribute) and receiver.attr == "grad":
            return ZERO_GRAD, None, None, PER_TENSOR
        if name == "backward":
            if isinstance(receiver, ast.Call) and method_name(receiver) == "scale" and receiver.args:
                return BACKWARD, subst_key(receiver.func.value, subst), receiver.args[0], "scaler"  # type: ignore[attr-defined]
            qual = ctx.qualname(func) or ""
            if qual == "torch.autograd.backward" or (raw is not None and raw.split(".")[-1] in ("accelerator", "fabric")):
                return (BACKWARD, None, call.args[0], None) if call.args else None
            if qual:
                # a module's function (`dist_autograd.backward(ctx, [loss])` keeps gradients in its own
                # context, not in `.grad`): not the tensor method whose accumulation the rules reason about
                return None
            return BACKWARD, key, receiver, None
        if name == "manual_backward" and call.args:
            return BACKWARD, None, call.args[0], None
        if name == "step":
            role = ctx.role(key) or ctx.role(raw)
            if role is not None and role.kind == "scaler":
                opt = subst_key(call.args[0], subst) if call.args else None
                return STEP, opt, None, "scaler"
            if ctx.is_scheduler(key) or (ctx.role(key) is None and ctx.is_scheduler(raw)):
                return SCHED_STEP, key, None, None
            if ctx.is_optimizer(key) or (ctx.role(key) is None and ctx.is_optimizer(raw)):
                closure = call.args[0] if call.args else kwarg(call, "closure")
                return STEP, key, closure, None
            return None
        if name == "unscale_":
            opt = subst_key(call.args[0], subst) if call.args else None
            return UNSCALE, opt, None, None
        if name in ("train", "eval") and _model_like(ctx, key, raw):
            off = name == "eval" or (call.args and isinstance(call.args[0], ast.Constant) and call.args[0].value is False)
            return (EVAL if off else TRAIN), key, None, None
        if name in _SYNCS:
            return SYNC, key, receiver, None
        if name in STORES and call.args:
            return APPEND, key, call.args[0], None
        if name == "forward" and _model_like(ctx, key, raw):
            return FORWARD, key, None, None
        if ctx.layer_method(key, name) is not None or (ctx.role(key) is None and ctx.layer_method(raw, name) is not None):
            return FORWARD, key, None, None  # `model.generate(x)`: a method of the model's class that runs its layers
    if is_clip(call):
        return CLIP, None, None, None
    if isinstance(func, ast.Name) and func.id.endswith("zero_grad"):
        return ZERO_GRAD, None, None, PER_TENSOR  # a helper such as `zero_grad(params)`: it may clear anything
    key = subst_key(func, subst)
    raw = key_of(func)
    if key is not None:
        if ctx.is_model(key) or (ctx.role(key) is None and ctx.is_model(raw)):
            return FORWARD, key, None, None
        if loss_class(ctx, call, key) or loss_class(ctx, call, raw):
            return LOSS, key, None, None
        if raw == "print" and call.args:
            return SYNC, None, call.args[0], "print"
    return None


def _model_like(ctx: FileContext, key: str | None, raw: str | None) -> bool:
    for candidate in (key, raw):
        while candidate:
            if ctx.is_model(candidate):
                return True
            candidate = candidate.rpartition(".")[0]
    return False


_OPAQUE = frozenset({ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})  # exact classes: ast never subclasses them
_WALKED: dict[type, tuple[str, ...]] = {ast.Name: (), ast.Constant: ()}  # a node class's fields the walk reads (no ctx marker)


def calls_in_order(node: ast.AST) -> list[ast.Call]:
    """The calls inside ``node`` in evaluation order (arguments before the call).

    A call ends after every call nested in it, and a call evaluated earlier ends
    earlier: sorting by end position gives the evaluation order.
    """
    if node.__class__ in _OPAQUE:
        return []
    calls: list[ast.Call] = []
    stack, AST, Call = [node], ast.AST, ast.Call
    pop, push = stack.pop, stack.append
    while stack:
        current = pop()
        kind = current.__class__
        if kind is Call:
            calls.append(current)
        fields = _WALKED.get(kind)
        if fields is None:
            fields = _WALKED[kind] = tuple(name for name in kind._fields if name != "ctx")
        for name in fields:
            value = getattr(current, name, None)
            if value.__class__ is list:
                for item in value:
                    if isinstance(item, AST) and item.__class__ not in _OPAQUE:
                        push(item)
            elif isinstance(value, AST) and value.__class__ not in _OPAQUE:
                push(value)
    calls.sort(key=_end)
    return calls


def _end(call: ast.Call) -> tuple[int, int]:
    return call.end_lineno or 0, call.end_col_offset or 0


def unwrap_iter(node: ast.expr) -> ast.expr:
    """``enumerate(tqdm(loader))`` -> ``loader``; the first iterable of ``zip``; ``metric_logger.log_every(loader,
    print_freq, header)`` (torchvision's reference scripts' logger, copied into DETR, DeiT, DINO, MAE...: it yields
    each item of its first argument)."""
    while isinstance(node, ast.Call) and node.args:
        name = key_of(node.func) or ""
        if name.split(".")[-1] in ("enumerate", "tqdm", "zip", "iter", "trange", "track", "progress_bar", "log_every"):
            node = node.args[0]
        else:
            break
    return node


def is_periodic(test: ast.expr) -> bool:
    """``if (i + 1) % k == 0`` and friends: a block that runs every k iterations."""
    return any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod) for n in walk(test))


def chained_mode(value: ast.expr) -> ast.Call | None:
    """The outermost ``.eval()`` / ``.train()`` in ``Net().to(device).eval()``."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        if value.func.attr in ("eval", "train"):
            return value
        value = value.func.value
    return None


def grad_of(ctx: FileContext, expr: ast.expr) -> bool | str | None:
    """False for no_grad / inference_mode / set_grad_enabled(False), ENABLED for enable_grad, else None."""
    call = expr if isinstance(expr, ast.Call) else None
    qual = ctx.qualname(call.func if call else expr) or ""
    last = qual.rsplit(".", 1)[-1]
    if not qual.startswith("torch"):
        return None
    if last in ("no_grad", "inference_mode"):
        if call is not None and call.args and isinstance(call.args[0], ast.Constant) and call.args[0].value is False:
            return None
        return False
    if last == "enable_grad":
        return ENABLED
    if last == "set_grad_enabled" and call is not None and call.args and isinstance(call.args[0], ast.Constant):
        return ENABLED if call.args[0].value else False
    return None
