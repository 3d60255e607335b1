"""TW109: the optimizer holds tensors that are no longer the model's parameters.

Seen in the order of statements: an optimizer built over ``model.parameters()``,
then, in the same function (or a later method of the class that built it in
``__init__``), a statement that replaces those parameters: a new submodule,
``load_state_dict(..., assign=True)``, a deep copy that is trained instead, an
FSDP wrap; or, for Adagrad (state made at construction), a cast or move
(``model.double()``, or ``model = model.half().to(device)``).
``.to()`` / ``.half()`` keep the Parameter objects (PyTorch 2.x) and are not
reported for other optimizers.
"""

from __future__ import annotations

import ast
from typing import Iterator

from trainwell.lint import events as ev
from trainwell.lint.context import FileContext, key_of, kwarg, method_name, strip_identity
from trainwell.lint.syntax import walk
from trainwell.lint.rules import TRAINING
from trainwell.diagnostic import Finding

CODE = "TW109"
REQUIRES = TRAINING
_CASTS = {"to", "cuda", "half", "double", "float", "bfloat16", "cpu", "to_empty"}
_UNJUDGED = object()


def check(ctx: FileContext) -> Iterator[Finding]:
    analysis = ctx.analysis
    scopes = [ctx.tree, *ctx.functions.values(), *(m for ms in ctx.methods.values() for m in ms.values())]
    built = []  # (scope, line, optimizer key, optimizer class, model keys)
    for scope in scopes:
        for node in ctx.members_of(scope, ast.Assign):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                role = ctx.classify(node.value)
                key = key_of(node.targets[0])
                if role is not None and role.kind == "optimizer" and key:
                    built.append((scope, node.lineno, key, role.cls, _held_modules(ctx, scope, node)))
    if not built:
        return
    groups = [(opt_cls, frozenset(models)) for *_, opt_cls, models in built]  # equal class and models: a statement is judged once
    for scope in scopes:
        for node in ctx.members_of(scope, ast.Assign, ast.Expr):
            if not _may_replace(ctx, node):
                continue
            judged: dict[tuple[str, frozenset[str]], str | None] = {}
            for (opt_scope, line, opt_key, opt_cls, models), group in zip(built, groups):
                if judged.get(group, _UNJUDGED) is None:
                    continue  # it replaces nothing of these models: no need to ask whether it comes after
                if not _after(ctx, opt_scope, line, scope, node.lineno):
                    continue
                if group not in judged:
                    judged[group] = _replacement(ctx, analysis, node, models, opt_cls)
                replaced = judged[group]
                if replaced is None or _rebuilt(ctx, scope, node.lineno, opt_key) or not _steps_after(analysis, opt_key, scope, node.lineno):
                    continue
                yield ctx.finding(
                    CODE, node,
                    f"`{ctx.snippet(node).strip()}` {replaced} after `{opt_key}` ({opt_cls or 'optimizer'}, line {line}) was built: "
                    f"the optimizer keeps updating the old tensors and the model it trains never changes.",
                    f"Build (or rebuild) `{opt_key}` after this line, over the model's current parameters.",
                )
                break


def _assigned(ctx: FileContext, scope: ast.AST) -> dict[str | None, list[ast.Assign]]:
    """Target key -> the assignments of ``scope``'s own body to it, in order (indexed once per scope)."""
    index = ctx.__dict__.setdefault("_tw109_assigned", {})
    found = index.get(id(scope))
    if found is None:
        found = index[id(scope)] = {}
        for assign in ctx.members_of(scope, ast.Assign):
            for target in assign.targets:  # type: ignore[attr-defined]
                found.setdefault(key_of(target), []).append(assign)  # type: ignore[arg-type]
    return found


def _held_modules(ctx: FileContext, scope: ast.AST, built: ast.Assign) -> set[str]:
    """The modules whose ``.parameters()`` the optimizer is built over: in its constructor call, or in the list of
    parameter groups a name of it was assigned before, in the same function (``params = [{"params":
    model.fc.parameters()}, ...]``)."""
    names = {n.id for n in walk(built.value) if isinstance(n, ast.Name)}
    by_target = _assigned(ctx, scope)
    sources = [built.value] + [n.value for name in names for n in by_target.get(name, ()) if n.lineno < built.lineno]
    owners = ctx.__dict__.setdefault("_tw109_owners", {})  # keyed by the node itself: it stays alive, its id its own
    for source in sources:
        if source not in owners:
            owners[source] = {key_of(c.func.value) for c in walk(source)  # type: ignore[attr-defined]
                              if isinstance(c, ast.Call) and method_name(c) in ("parameters", "named_parameters")}
    return set().union(*(owners[source] for source in sources)) - {None}


def _after(ctx: FileContext, opt_scope: ast.AST, line: int, scope: ast.AST, here: int) -> bool:
    if opt_scope is scope:
        return here > line
    if getattr(opt_scope, "name", None) != "__init__":
        return False
    return any(opt_scope in ms.values() and scope in ms.values() for ms in ctx.methods.values())


def _related(ctx: FileContext, analysis, key: str | None, models: set[str]) -> bool:
    """Whether ``key`` holds parameters the optimizer holds: a module it was built over, a part of one, or the whole
    model whose parts it was built over (``[{"params": model.backbone.parameters()}, {"params": model.head...}]``)."""
    return key is not None and any(analysis.same(key, m) or key.startswith(m + ".") or m.startswith(key + ".") for m in models)


def _may_replace(ctx: FileContext, node: ast.AST) -> bool:
    """Whether ``node`` has a shape :func:`_replacement` can report, whatever the optimizer: a ``load_state_dict``
    or a cast called for its effect, or an assignment of a new model, a cast, a copy or an FSDP wrapper (asked once per
    statement, not once per statement and optimizer)."""
    if isinstance(node, ast.Expr):
        return isinstance(node.value, ast.Call) and method_name(node.value) in _CASTS | {"load_state_dict"}
    if not isinstance(node, ast.Assign) or len(node.targets) != 1 or not isinstance(node.value, ast.Call):
        return False
    role, qual = ctx.classify(node.value), ctx.call_name(node.value) or ""
    return role is not None and role.kind == "model" or _casts_of(node.value) is not None \
        or qual.endswith("deepcopy") or qual.rsplit(".", 1)[-1] in ("FullyShardedDataParallel", "FSDP", "fully_shard")


def _replacement(ctx: FileContext, analysis, node: ast.stmt, models: set[str], opt_cls: str) -> str | None:
    """What ``node`` does to the optimizer's parameters, or None when it keeps them."""
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        call, name = node.value, method_name(node.value)
        owner = key_of(call.func.value) if isinstance(call.func, ast.Attribute) else None
        if name == "load_state_dict" and _related(ctx, analysis, owner, models):
            assign = kwarg(call, "assign")
            if isinstance(assign, ast.Constant) and assign.value is True:
                return "replaces every Parameter (assign=True)"
        if name in _CASTS and opt_cls == "Adagrad" and _related(ctx, analysis, owner, models):
            return "moves or casts the parameters while Adagrad's state, made at construction, stays behind"
        return None
    if not isinstance(node, ast.Assign) or len(node.targets) != 1:
        return None
    target = node.targets[0]
    base = target.value if isinstance(target, (ast.Attribute, ast.Subscript)) else None
    if base is not None and _inside(analysis, key_of(target) if isinstance(target, ast.Attribute) else key_of(base), models) \
            and ctx.classify(node.value) is not None and ctx.classify(node.value).kind == "model":
        return "puts new parameters into the model"
    value = node.value
    if opt_cls == "Adagrad" and _related(ctx, analysis, key_of(target), models) and _casts_of(value) == key_of(target):
        return "moves or casts the parameters while Adagrad's state, made at construction, stays behind"
    if isinstance(target, ast.Name) and (target.id in models or any(m.startswith(target.id + ".") for m in models)) and isinstance(value, ast.Call):
        role, inner = ctx.classify(value), strip_identity(value)
        wraps_itself = isinstance(inner, ast.Call) and any(key_of(strip_identity(a)) == target.id for a in inner.args)
        if role is not None and role.kind == "model" and key_of(inner) != target.id and not wraps_itself:
            return "re-creates the model"
    if isinstance(value, ast.Call) and (ctx.call_name(value) or "").endswith("deepcopy") and value.args:
        copied, key = key_of(value.args[0]), key_of(target)
        if _related(ctx, analysis, copied, models) and key and _trained(analysis, key) and not any(analysis.same(key, m) for m in models):
            return "trains a copy of the model"
    if isinstance(value, ast.Call) and (ctx.call_name(value) or "").rsplit(".", 1)[-1] in ("FullyShardedDataParallel", "FSDP", "fully_shard"):
        if value.args and _related(ctx, analysis, key_of(value.args[0]), models):
            return "wraps the model in FSDP, which replaces its parameters"
    return None


def _inside(analysis, key: str | None, models: set[str]) -> bool:
    """Whether the submodule ``key`` is one the optimizer was built over, or a part of one (a new ``model.extra``
    beside the parts it holds is not: it may be left out of training on purpose)."""
    return key is not None and any(analysis.same(key, m) or key.startswith(m + ".") for m in models)


def _casts_of(value: ast.expr) -> str | None:
    """``model`` for ``model.half().to(device)``: the key a chain of casts and moves starts from, else None."""
    if not (isinstance(value, ast.Call) and method_name(value) in _CASTS):
        return None
    while isinstance(value, ast.Call) and method_name(value) in _CASTS:
        value = value.func.value  # type: ignore[attr-defined]
    return key_of(value)


def _trained(analysis, key: str) -> bool:
    return any(e.kind == ev.FORWARD and e.key == key and e.grad is not False and e.frame is not None and e.frame.has(ev.BACKWARD)
               for e in analysis.events)


def _steps_after(analysis, opt_key: str, scope: ast.AST, line: int) -> bool:
    """Whether the stale optimizer is stepped after the replacement (else nothing trains with it: a test, an export)."""
    # keys are file-wide: a step in another function is the same optimizer only for `self.` keys (one object per instance)
    steps = analysis.__dict__.get("_tw109_steps")
    if steps is None:  # asked per replacement: the steps, listed once
        steps = analysis.__dict__["_tw109_steps"] = [e for e in analysis.events if e.kind == ev.STEP]
    return any(analysis.same(e.key, opt_key)
               and (e.scope is scope and e.line > line or opt_key in e.subst.values()  # stepped here, or in a helper handed it
                    or opt_key.startswith("self.") and e.scope is not scope) for e in steps)


def _rebuilt(ctx: FileContext, scope: ast.AST, line: int, opt_key: str) -> bool:
    return _last_assigned(ctx, scope, opt_key) > line


def _last_assigned(ctx: FileContext, scope: ast.AST, key: str) -> int:
    """The last line of ``scope`` that assigns ``key`` (0: none); cached per scope and key (asked per step)."""
    memo = ctx.__dict__.setdefault("_tw109_last_assigned", {})
    if (id(scope), key) not in memo:
        memo[(id(scope), key)] = max((node.lineno for node in _assigned(ctx, scope).get(key, ())), default=0)
    return memo[(id(scope), key)]
