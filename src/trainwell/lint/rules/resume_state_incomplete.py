"""TW112: a run resumes from a checkpoint that restores the model but not the optimizer, scheduler or scaler.

Premises, each read from the file: ``model.load_state_dict(...)`` is fed from a
``torch.load`` checkpoint; the run *resumes* (it reads the checkpoint's epoch or
step, restores some other state from it, or the load sits under an ``if`` about
resuming), so it is no fine-tuning from pretrained weights; a training loop steps an optimizer that keeps state
(momentum, Adam moments), a scheduler, or an enabled GradScaler; and nothing in
the file restores that object (no ``load_state_dict`` on it, not handed to a
helper we cannot see, no framework ``load_state``).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from trainwell.diagnostic import Finding
from trainwell.lint import events as ev
from trainwell.lint.context import FileContext, key_of, kwarg, method_name
from trainwell.lint.rules._data import assigned, qual_last, single_value
from trainwell.lint.syntax import walk

CODE = "TW112"
_STATEFUL = {"Adam", "AdamW", "Adagrad", "Adadelta", "Adamax", "ASGD", "LBFGS", "NAdam", "RAdam", "RMSprop", "Rprop",
             "SparseAdam", "Adafactor", "Lion", "Muon"}
_RESUME_KEYS = ("epoch", "step", "iter")
_SCHEDULER_CLASS = re.compile(r"^[A-Z]\w*(LR|Scheduler|Schedule)$")
_LOST = {"optimizer": "its moments restart from zero", "scheduler": "the schedule restarts from its first step",
         "scaler": "the loss scale restarts from its initial value"}


def check(ctx: FileContext) -> Iterator[Finding]:
    if "load_state_dict" not in ctx.source or "load_state(" in ctx.source:
        return
    for call in ctx.calls:
        if method_name(call) != "load_state_dict" or not call.args:
            continue
        target = key_of(call.func.value)  # type: ignore[attr-defined]
        if target is None or not _is_model(ctx, target):
            continue
        checkpoint = _checkpoint_of(ctx, call.args[0])
        if checkpoint is None or not _resumes(ctx, call, checkpoint) or _reloaded_later(ctx, call, target):
            continue
        lost = [(key, kind, cls) for key, kind, cls in _stateful_objects(ctx) if not _restored(ctx, key)]
        if not lost:
            continue
        names = ", ".join(f"`{key}` ({cls}: {_lost(kind, cls)})" for key, kind, cls in lost)
        yield ctx.finding(
            CODE, call,
            f"`{ctx.snippet(call)}` resumes the model from `{checkpoint}`, but training goes on with {names}: "
            "the resumed run does not continue the one that was saved.",
            "Save each object's state_dict() in the checkpoint and call load_state_dict() on each when resuming "
            "(optimizer, scheduler, scaler).",
        )


def _lost(kind: str, cls: str) -> str:
    return "its momentum buffers restart from zero" if cls == "SGD" else _LOST[kind]


def _is_model(ctx: FileContext, key: str) -> bool:
    while key:
        if ctx.is_model(key):
            return True
        key = key.rpartition(".")[0]
    return False


def _checkpoint_of(ctx: FileContext, node: ast.expr) -> str | None:
    """The key holding the ``torch.load`` result that ``node`` reads (``ckpt["model"]`` -> ``ckpt``)."""
    while isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Call) and method_name(node) == "get":
        node = node.func.value  # type: ignore[attr-defined]
    if isinstance(node, ast.Call) and (ctx.call_name(node) or "") == "torch.load":
        return ctx.snippet(node, 40)  # `model.load_state_dict(torch.load(path))`: only a resume guard can tell
    key = key_of(node)
    if key is None:
        return None
    values = [single_value(ctx, node)] if single_value(ctx, node) is not None else assigned(ctx, key)
    # `checkpoint = torch.load(path)` / `else: checkpoint = torch.load(path, map_location=loc)`: a load either way
    if values and all(isinstance(v, ast.Call) and (ctx.call_name(v) or "") == "torch.load" for v in values):
        return key
    return None


def _resumes(ctx: FileContext, load: ast.Call, checkpoint: str) -> bool:
    """The checkpoint's epoch or step is read back, or the load is guarded by a test about resuming."""
    if _reads_position(ctx, checkpoint):
        return True
    for node in ctx.nodes_of(ast.If):
        if isinstance(node, ast.If) and ctx.encloses(node, load) and "resum" in ast.unparse(node.test).lower():
            return True
    if _saved_with_state_then_trained(ctx, load, checkpoint):
        return True
    for call in ctx.calls:  # some other state comes back from the same checkpoint: an optimizer's, a scheduler's
        if method_name(call) == "load_state_dict" and call is not load and call.args and _checkpoint_of(ctx, call.args[0]) == checkpoint:
            receiver = key_of(call.func.value)  # type: ignore[attr-defined]
            if receiver is not None and not _is_model(ctx, receiver):
                return True
    return False


def _reads_position(ctx: FileContext, checkpoint: str) -> bool:
    """Whether the file reads the checkpoint's epoch or step (``ckpt["epoch"]``, ``ckpt.get("step")``); once per
    checkpoint key: a script's loads share a few."""
    memo = ctx.__dict__.setdefault("_tw112_reads_position", {})
    if checkpoint not in memo:
        memo[checkpoint] = False
        for node in ctx.nodes_of(ast.Subscript, ast.Call):
            key = None
            if isinstance(node, ast.Subscript) and key_of(node.value) == checkpoint and isinstance(node.slice, ast.Constant):
                key = node.slice.value
            elif isinstance(node, ast.Call) and method_name(node) == "get" and key_of(node.func.value) == checkpoint and node.args:  # type: ignore[attr-defined]
                key = node.args[0].value if isinstance(node.args[0], ast.Constant) else None
            if isinstance(key, str) and any(w in key.lower() for w in _RESUME_KEYS):
                memo[checkpoint] = True
                break
    return memo[checkpoint]


def _saved_with_state_then_trained(ctx: FileContext, load: ast.Call, checkpoint: str) -> bool:
    """The file itself writes the checkpoint it loads (``torch.save({..., "optimizer": optimizer.state_dict()},
    "last.pt")`` and ``torch.load("last.pt")``) with the state of something other than the model, and a training
    loop runs after the load: the checkpoint was written to continue the run, and the run continues from it. A load
    after the last training loop (testing the best weights) is not a resume."""
    loads = _load_calls(ctx, load.args[0])
    sources = [ast.dump(c.args[0]) for c in loads if c.args]
    if not sources:
        return False
    stepped = {key for key, _, _ in _stateful_objects(ctx)}
    saved = False
    for call in ctx.calls:
        if (ctx.call_name(call) or "") != "torch.save" or len(call.args) < 2 or ast.dump(call.args[1]) not in sources:
            continue
        obj = call.args[0]
        obj = single_value(ctx, obj) if key_of(obj) is not None else obj
        if obj is not None and any(method_name(n) == "state_dict" and key_of(n.func.value) in stepped  # type: ignore[attr-defined]
                                   for n in walk(obj)):
            saved = True  # the state of an object that training steps, not only the model's
    return saved and _trains_after(ctx, load)


def _load_calls(ctx: FileContext, node: ast.expr) -> list[ast.Call]:
    """The ``torch.load(...)`` calls whose result ``node`` reads."""
    while isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Call) and method_name(node) == "get":
        node = node.func.value  # type: ignore[attr-defined]
    values = [node] if isinstance(node, ast.Call) else assigned(ctx, key_of(node)) if key_of(node) is not None else []
    return [v for v in values if isinstance(v, ast.Call) and (ctx.call_name(v) or "") == "torch.load"]


def _trains_after(ctx: FileContext, load: ast.Call) -> bool:
    """A loop that runs backward() and an optimizer step starts after ``load`` in the function (or module) that
    holds it: written there below it, or reached through a call written there below it."""
    owner = _owners(ctx).get(id(load))
    training = _training_loops(ctx)
    members, lasts = _scope_view(ctx, owner, training)
    for frame, scopes in training:  # a reload inside training (back to the best weights) keeps the live optimizer
        inside = ctx.encloses(frame.node, load)
        called_inside = owner in scopes and id(frame.node) not in members
        if inside or called_inside:
            return False
    return any(last > load.lineno for last in lasts)


def _training_loops(ctx: FileContext) -> list[tuple[ev.Frame, set[int]]]:
    """The loops that run backward() and an optimizer step, each with the ids of the scopes its events are in (once
    per loop model: asked per model load)."""
    memo = ctx.analysis.__dict__
    if "_tw112_training" not in memo:
        memo["_tw112_training"] = [(f, {id(e.scope) for e in f.events}) for f in ctx.analysis.frames
                                   if f.kind == "loop" and f.has(ev.BACKWARD) and f.has(ev.STEP)]
    return memo["_tw112_training"]


def _scope_view(ctx: FileContext, owner: int | None, training: list) -> tuple[set[int], list[int]]:
    """The ids of the nodes of the scope ``owner`` names, and per training loop the last line in that scope where
    it starts or is reached from (its own ``for`` there, or a call there that inlines it; 0: none): a load above that
    line runs before training. Once per scope."""
    memo = ctx.analysis.__dict__.setdefault("_tw112_scope_view", {})
    if owner not in memo:
        scope = ctx.scope_members.get(owner, []) if owner is not None else []
        members = {id(n) for n in scope}
        lasts = [max([f.node.lineno] * (id(f.node) in members)  # type: ignore[attr-defined]
                     + [site.call.lineno for e in f.events for site in e.sites if id(site.call) in members], default=0)
                 for f, _ in training]
        memo[owner] = (members, lasts)
    return memo[owner]


def _owners(ctx: FileContext) -> dict[int, int]:
    """id(node) -> the key of ``scope_members`` whose list holds it (each node sits in exactly one), once per file."""
    found = ctx.__dict__.get("_tw112_owners")
    if found is None:
        found = ctx.__dict__["_tw112_owners"] = {id(n): key for key, members in ctx.scope_members.items() for n in members}
    return found


def _stateful_objects(ctx: FileContext) -> list[tuple[str, str, str]]:
    """(key, kind, class) of the optimizers, schedulers and enabled scalers that training steps and that keep state
    (found once per loop model: asked for every model load of the file)."""
    memo = ctx.analysis.__dict__
    if "_tw112_stateful" not in memo:
        memo["_tw112_stateful"] = _find_stateful_objects(ctx)
    return memo["_tw112_stateful"]


def _find_stateful_objects(ctx: FileContext) -> list[tuple[str, str, str]]:
    stepped: dict[str, str] = {}
    for frame in ctx.analysis.frames:
        if frame.kind != "loop" or not frame.has(ev.BACKWARD):
            continue
        for event in frame.events:
            if event.kind in (ev.STEP, ev.SCHED_STEP) and event.key:
                stepped.setdefault(event.key, event.kind)
            if event.kind == ev.STEP and event.via == "scaler" and isinstance(event.node, ast.Call):
                scaler = key_of(event.node.func.value) if isinstance(event.node.func, ast.Attribute) else None  # type: ignore[attr-defined]
                if scaler:
                    stepped.setdefault(scaler, "scaler")
    found = []
    for key in stepped:
        role = ctx.role(key)
        if role is None or not isinstance(role.node, ast.Call):
            continue
        if role.kind == "optimizer" and _keeps_state(ctx, role.cls, role.node):
            found.append((key, "optimizer", role.cls))
        elif role.kind == "scheduler" and not _replayed(ctx, key, role.cls):
            found.append((key, "scheduler", role.cls))
        elif role.kind == "scaler" and role.info.get("enabled"):
            found.append((key, "scaler", role.cls))
    return found


def _reloaded_later(ctx: FileContext, load: ast.Call, model: str) -> bool:
    """Another load_state_dict on the same model further down the same function: ``load`` is not the resume."""
    owner = _owners(ctx).get(id(load))
    scope = ctx.scope_members.get(owner, []) if owner is not None else []
    return any(isinstance(n, ast.Call) and n is not load and method_name(n) == "load_state_dict" and n.lineno > load.lineno
               and key_of(n.func.value) == model for n in scope)  # type: ignore[attr-defined]


def _replayed(ctx: FileContext, key: str, cls: str) -> bool:
    """``scheduler.step(epoch)``: the position is set from the epoch at every step, so a resume cannot lose it."""
    if cls == "ReduceLROnPlateau":
        return False  # its argument is a metric
    return any(method_name(c) == "step" and key_of(c.func.value) == key and (c.args or c.keywords) for c in ctx.calls)  # type: ignore[attr-defined]


def _keeps_state(ctx: FileContext, cls: str, call: ast.Call) -> bool:
    if cls in _STATEFUL:
        return True
    if cls == "SGD":
        momentum = kwarg(call, "momentum")
        if momentum is None and len(call.args) > 2:
            momentum = call.args[2]
        momentum = _argparse_default(ctx, momentum) if momentum is not None else None
        return isinstance(momentum, ast.Constant) and isinstance(momentum.value, (int, float)) and momentum.value > 0
    return False


def _argparse_default(ctx: FileContext, node: ast.expr) -> ast.expr:
    """``args.momentum`` -> the ``default=`` of the file's one ``add_argument("--momentum", ...)``; else ``node``."""
    if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)):
        return node
    found = []
    for call in ctx.calls:
        if method_name(call) != "add_argument" or not call.args:
            continue
        dest = kwarg(call, "dest")
        names = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        long = next((n for n in names if n.startswith("--")), names[0] if names else "")
        name = dest.value if isinstance(dest, ast.Constant) else long.lstrip("-").replace("-", "_")
        if name == node.attr:
            found.append(kwarg(call, "default"))
    return found[0] if len(found) == 1 and found[0] is not None else node


def _restored(ctx: FileContext, key: str) -> bool:
    """Whether anything may restore ``key``: a load_state_dict on it (or an alias) or a call we cannot see into
    (answered once per key and loop model: every model load of the file asks about the same objects)."""
    memo = ctx.analysis.__dict__.setdefault("_tw112_restored", {})
    if key not in memo:
        memo[key] = _find_restored(ctx, key)
    return memo[key]


def _find_restored(ctx: FileContext, key: str) -> bool:
    wrappers = {id(a.value) for a in ctx.assigns if len(a.targets) == 1 and key_of(a.targets[0]) == key and isinstance(a.value, ast.Call)
                and (key_of(a.value.func) or "").rsplit(".", 1)[-1][:1].isupper()}
    for call in ctx.calls:
        receiver = key_of(call.func.value) if isinstance(call.func, ast.Attribute) else None
        if method_name(call) == "load_state_dict" and receiver is not None and ctx.analysis.same(receiver, key):
            return True
        if id(call) in wrappers:
            continue  # `optimizer = LARC(optimizer=optimizer)`: a class that wraps it, whose state the loop then steps
        if any(key_of(a) == key for a in [*call.args, *(k.value for k in call.keywords)]) and _may_restore(ctx, call):
            return True
    return False


def _may_restore(ctx: FileContext, call: ast.Call) -> bool:
    """A call that receives the object and might load its state: anything but torch itself, a scaler's step, or a local helper that loads nothing."""
    qual = ctx.call_name(call) or ""
    if qual.startswith("torch.") or method_name(call) in ("step", "unscale_", "scale"):
        return False
    if _SCHEDULER_CLASS.search((key_of(call.func) or "").rsplit(".", 1)[-1]):
        return False  # a scheduler built over the optimizer (`WarmUpLR(optimizer, ...)`): a constructor, not a restore
    name = key_of(call.func)
    helper = ctx.functions.get(name or "") or ctx.nested_functions.get(name or "")
    if helper is None and isinstance(call.func, ast.Attribute):
        helper = next((ms[call.func.attr] for ms in ctx.methods.values() if call.func.attr in ms), None)
    if helper is None and name in ctx.classes:
        helper = ctx.classes[name]
    if helper is not None:
        return any(isinstance(n, ast.Attribute) and n.attr in ("load_state_dict", "load_state") for n in walk(helper))
    return qual_last(ctx, call) not in ("DataLoader",)
