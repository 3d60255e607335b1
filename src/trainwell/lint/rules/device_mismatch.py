"""TW403: a batch (or its labels) is not moved to the model's device.

Reported on the forward call when the model was moved to a device that may be
a GPU and the input comes straight from a DataLoader's batch (no ``.to()``, no
reassignment, no ``collate_fn``), or from a batch parameter of which the same
function moves other entries (``batch["labels"].to(device)``) but not this one.
"""

from __future__ import annotations

import ast
from typing import Iterator

from trainwell.lint import events as ev
from trainwell.lint.context import FileContext, key_of, kwarg, method_name, strip_identity
from trainwell.lint.dataflow import reaching, scope_nodes
from trainwell.diagnostic import Finding

CODE = "TW403"
_MOVES = {"to", "cuda"}


def check(ctx: FileContext) -> Iterator[Finding]:
    if "cuda" not in ctx.source:
        return
    moved = _moved_models(ctx)
    if not moved:
        return
    analysis = ctx.analysis
    for forward in (e for e in analysis.events if e.kind == ev.FORWARD):
        if not isinstance(forward.node, ast.Call) or not forward.node.args or forward.scope is None:
            continue
        if not any((analysis.same(forward.key, m) or analysis.same(key_of(forward.node.func), m)) and _same_object(ctx, forward, scopes)
                   for m, scopes in moved.items()):
            continue
        if not _places_nothing(ctx, forward.key):
            continue  # a model we do not know may move its inputs itself (`inputs.cuda()` inside forward)
        arg = forward.node.args[0]
        base = arg.value if isinstance(arg, ast.Subscript) else arg
        if not isinstance(base, ast.Name) or not _unmoved(ctx, analysis, forward, base):
            continue
        yield ctx.finding(
            CODE, forward.node,
            f"`{ctx.snippet(forward.node)}`: the model was moved to a device but `{ctx.snippet(arg)}` comes from the batch "
            "as loaded (on the CPU): on a GPU this fails with a device mismatch.",
            f"Move the batch first, e.g. `{ctx.snippet(base)} = {ctx.snippet(base)}.to(device)` (or in the DataLoader's collate_fn).",
        )


def _places_nothing(ctx: FileContext, key: str | None) -> bool:
    """Whether the model under ``key`` is known to leave its inputs where they are: built here from a torch or
    torchvision class, or from a local class whose code never moves a tensor."""
    role = ctx.role(key)
    if role is not None and role.node is None:  # known from usage only: follow `self.model = model.to(device)`
        sources = [ctx.role(key_of(strip_identity(a.value))) for a in ctx.assigns if len(a.targets) == 1 and key_of(a.targets[0]) == key]
        role = sources[0] if len(sources) == 1 else None
    if role is None or role.kind != "model" or not isinstance(role.node, ast.Call):
        return False
    qual = ctx.call_name(role.node) or ""
    if qual.startswith(("torch.nn.", "torchvision.models.")):
        return True
    cls = ctx.classes.get(role.cls)
    return cls is not None and not any(isinstance(n, ast.Call) and method_name(n) in _MOVES for n in ast.walk(cls))


def _same_object(ctx: FileContext, forward: ev.Event, scopes: dict[int, int]) -> bool:
    """Keys are file-wide, objects are not: the move must be in the forward's own function, or (for ``self.model``)
    in a method of the same class; a module-level move reaches the module-level code below it and the helpers that
    code calls (a later notebook cell's `model.to(device)` never reaches an earlier cell's loop)."""
    module = scopes.get(id(ctx.tree))
    if module is not None and (forward.sites[0].caller is ctx.tree if forward.sites else forward.scope is ctx.tree):
        return module < forward.entry_line
    if id(forward.scope) in scopes:
        return True
    if module is not None and forward.subst:
        return True
    if (forward.key or "").startswith("self."):
        return any(forward.scope in ms.values() and any(id(m) in scopes for m in ms.values()) for ms in ctx.methods.values())
    return False


def _cpu(ctx: FileContext, target: ast.expr | None) -> bool:
    """``"cpu"``, ``torch.device("cpu")``, or a name assigned exactly once to one of them."""
    if isinstance(target, ast.Name):
        values = [a.value for a in ctx.assigns if len(a.targets) == 1 and key_of(a.targets[0]) == target.id]
        target = values[0] if len(values) == 1 else None
    if isinstance(target, ast.Call) and (ctx.call_name(target) or "").endswith("device") and target.args:
        target = target.args[0]
    return isinstance(target, ast.Constant) and target.value == "cpu"


def _moved_models(ctx: FileContext) -> dict[str, dict[int, int]]:
    """Keys of the models moved to a device, with the ids of the scopes that move them (-> the first line that does)."""
    keys: dict[str, dict[int, int]] = {}
    owner = {id(n): scope for scope, members in ((s, ctx.scope_members.get(id(s), [])) for s in
             [ctx.tree, *ctx.functions.values(), *ctx.nested_functions.values(), *(m for ms in ctx.methods.values() for m in ms.values())])
             for n in members}
    for node in ctx.nodes:
        call = None
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and method_name(node.value) in _MOVES:
            call, key = node.value, key_of(node.targets[0])
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and method_name(node.value) in _MOVES:
            call, key = node.value, key_of(node.value.func.value)  # type: ignore[attr-defined]
        if call is None or key is None or not ctx.is_model(key):
            continue
        target = call.args[0] if call.args else kwarg(call, "device")
        if _cpu(ctx, target):
            continue  # moved to the CPU (`device = "cpu"`): no other device to mismatch
        where = keys.setdefault(key, {})
        scope = id(owner.get(id(node), ctx.tree))
        where[scope] = min(where.get(scope, node.lineno), node.lineno)
    return keys


def _unmoved(ctx: FileContext, analysis, forward: ev.Event, name: ast.Name) -> bool:
    values = reaching(ctx, forward.scope, name.id, forward.line)
    if len(values) == 1 and isinstance(values[0], (ast.For, ast.AsyncFor)):
        loop = values[0]
        keys = {f.iter_key for f in analysis.frames if f.node is loop and f.iter_key}
        roles = [ctx.role(k) for k in keys]
        if not roles or any(r is None or r.kind != "loader" or not isinstance(r.node, ast.Call) for r in roles):
            return False  # not a DataLoader we can see: the data may already be on the device
        return all(kwarg(r.node, "collate_fn") is None and kwarg(r.node, "pin_memory_device") is None for r in roles)  # type: ignore[union-attr]
    if values or forward.scope is ctx.tree:
        return False
    params = {a.arg for a in forward.scope.args.args}  # type: ignore[attr-defined]
    if name.id not in params:
        return False
    return any(isinstance(n, ast.Call) and method_name(n) in _MOVES and isinstance(n.func.value, ast.Subscript)  # type: ignore[attr-defined]
               and key_of(n.func.value.value) == name.id for n in scope_nodes(ctx, forward.scope))  # type: ignore[attr-defined]
