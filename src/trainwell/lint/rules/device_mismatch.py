"""TW403: a batch (or its labels) is not moved to the model's device.

Two places are checked, once the model was moved to a device that may be a GPU:

* the forward call, whose input comes from a DataLoader's batch as loaded (no ``.to()`` on the way, only
  reshapes and casts that keep the device: ``x.view(...)``, ``x.detach()``, ``x.float()``), or from a batch
  parameter of which the same function moves other entries (``batch["labels"].to(device)``) but not this one;
* a torch loss (``nn.CrossEntropyLoss()`` instance, ``F.cross_entropy``) whose input is that model's output and
  whose target comes from the batch as loaded: the output is on the device, the labels on the CPU.

A batch counts as loaded on the CPU only when it comes from a DataLoader of the file without a ``collate_fn`` (nor
``pin_memory_device``) over a dataset that places nothing on a device itself.
"""

from __future__ import annotations

import ast
from typing import Iterator

from trainwell.diagnostic import Finding
from trainwell.lint import events as ev
from trainwell.lint.context import (
    FileContext,
    key_of,
    kwarg,
    method_name,
)
from trainwell.lint.dataflow import Element, definitions, scope_nodes
from trainwell.lint.loss_calls import loss_calls
from trainwell.lint.rules._placement import (
    MOVES,
    bare_move,
    cpu_loaders,
    meets_parameters,
    wrappers,
)
from trainwell.lint.syntax import walk

CODE = "TW403"
_ORIGINS = {"loaded": "comes from the batch as loaded", "built": "is a tensor built on the CPU",
            "parameter": "is an entry of the batch left as it came while other entries are moved"}
# tensor methods whose result lives on the device of the tensor they are called on
_KEEP_DEVICE = {"view", "reshape", "flatten", "squeeze", "unsqueeze", "permute", "transpose", "contiguous", "detach",
                "float", "long", "int", "double", "half", "bool", "clone", "t", "view_as", "reshape_as", "squeeze_",
                "unsqueeze_", "requires_grad_"}


def check(ctx: FileContext) -> Iterator[Finding]:
    if ".to(" not in ctx.source and ".cuda(" not in ctx.source:
        return
    moved = _moved_models(ctx)
    if not moved:
        return
    analysis = ctx.analysis
    on_device: dict[int, ev.Event] = {}  # id of a forward call -> its event, for the model moved to a device
    for forward in (e for e in analysis.events if e.kind == ev.FORWARD):
        if not isinstance(forward.node, ast.Call) or forward.scope is None:
            continue
        if not any((analysis.same(forward.key, m) or analysis.same(key_of(forward.node.func), m)) and _same_object(ctx, forward, scopes)
                   for m, scopes in moved.items()):
            continue
        on_device.setdefault(id(forward.node), forward)
    reported: set[int] = set()
    for forward in (e for e in analysis.events if e.kind == ev.FORWARD and on_device.get(id(e.node)) is not None):
        if id(forward.node) in reported or not forward.node.args:  # type: ignore[attr-defined]
            continue
        if _not_a_module_here(ctx, forward) or not _bare_move_reaches(ctx, forward):
            continue
        args = forward.node.args  # type: ignore[attr-defined]
        positional = args[:next((i for i, a in enumerate(args) if isinstance(a, ast.Starred)), len(args))]
        # a model we do not know may move its inputs itself (`inputs.cuda()` inside forward), or read one on the host only
        unmoved = [(arg, base, origin) for index, arg in enumerate(positional)
                   for base in [arg.value if isinstance(arg, ast.Subscript) else arg]
                   if isinstance(base, ast.Name) and meets_parameters(ctx, forward.key, index)
                   for origin in [_unmoved(ctx, analysis, forward.scope, forward.line, base)] if origin]
        if not unmoved:
            continue
        arg, base, origin = unmoved[0]
        reported.add(id(forward.node))
        yield ctx.finding(
            CODE, forward.node,
            f"`{ctx.snippet(forward.node)}`: the model was moved to a device{_unwrapped(ctx, forward.key)} but "
            f"`{ctx.snippet(arg)}` {_ORIGINS[origin]} (on the CPU): on a GPU this fails with a device mismatch.",
            f"Move it first, e.g. `{ctx.snippet(base)} = {ctx.snippet(base)}.to(device)`"
            + (" (or in the DataLoader's collate_fn)." if origin == "loaded" else "."),
        )
    if not on_device:
        return
    for call, _loss, first, scope in loss_calls(ctx, set(ev.FUNCTIONAL_LOSSES.values()) | _loss_classes(ctx)):
        target = call.args[1] if len(call.args) > 1 else kwarg(call, "target")
        if target is None or id(call) in reported or not _torch_loss(ctx, call):
            continue
        if _output_of(ctx, scope, first, call.lineno, on_device) is None:
            continue
        base = _through_keepers(target)
        origin = _from_loader(ctx, analysis, scope, base.id, call.lineno, 0) if isinstance(base, ast.Name) else None
        if origin is None:
            continue
        reported.add(id(call))
        yield ctx.finding(
            CODE, call,
            f"`{ctx.snippet(call)}`: the output of the model is on its device but the target `{ctx.snippet(target)}` "
            f"{_ORIGINS[origin]} (on the CPU): on a GPU this fails with a device mismatch.",
            f"Move the labels too, e.g. `{ctx.snippet(base)} = {ctx.snippet(base)}.to(device)`.",
        )


def _bare_move_reaches(ctx: FileContext, forward: ev.Event) -> bool:
    """With a DataParallel / DDP wrapper on some paths, whether the move on a path without one comes before the forward:
    in the forward's own function above it, or in a function that calls the forward's function after the move."""
    if not wrappers(ctx, forward.key):
        return True
    move = bare_move(ctx, forward.key)
    if move is None:
        return False
    scope = ctx.scope_of(move)
    return (forward.scope is scope and move.lineno < forward.line) or any(
        site.caller is scope and move.lineno < site.call.lineno for site in forward.sites)


def _unwrapped(ctx: FileContext, key: str | None) -> str:
    """Where the model is moved with no wrapper to move its inputs, when a DataParallel / DDP wraps it on other paths."""
    if not wrappers(ctx, key):
        return ""
    move = bare_move(ctx, key)
    return "" if move is None else (f" (`{ctx.snippet(move)}` at line {move.lineno}, on a path where no DataParallel or "
                                    "DistributedDataParallel wraps it to move its inputs)")


def _loss_classes(ctx: FileContext) -> set[str]:
    return {r.cls for r in ctx.roles.values() if r is not None and r.kind == "loss"}


def _torch_loss(ctx: FileContext, call: ast.Call) -> bool:
    """A loss of torch itself, which moves nothing: ``nn.CrossEntropyLoss()(...)``, ``F.cross_entropy(...)`` (a loss
    class of the project may move the labels to the device of the logits)."""
    role = ctx.role(key_of(call.func))
    if role is not None and role.kind == "loss":
        return isinstance(role.node, ast.Call) and (ctx.call_name(role.node) or "").startswith("torch.nn.")
    return (ctx.call_name(call) or "").startswith("torch")


def _through_keepers(node: ast.expr) -> ast.expr:
    """``y.float().view(-1)`` -> ``y``: the calls whose result stays on the device of their receiver."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _KEEP_DEVICE:
        node = node.func.value
    return node


def _value(ctx: FileContext, scope: ast.AST, name: str, line: int) -> tuple[int, ast.AST] | None:
    """The one value assigned to ``name`` that reaches ``line`` (the latest by position), with its line; None when
    that assignment sits in a branch or loop that does not hold ``line`` (`if use_gpu: x = x.cuda()`): another value
    may reach too."""
    before = [(at, value) for at, value in definitions(ctx, scope).get(name, []) if at < line]
    if not before or isinstance(before[-1][1], ast.AugAssign):
        return None
    at, value = before[-1]
    parents = ctx.parents
    node = parents.get(id(value.value if isinstance(value, Element) else value))
    while node is not None and node is not scope:
        if isinstance(node, _BRANCHES) and not (node.lineno <= line <= (node.end_lineno or node.lineno)):  # type: ignore[attr-defined]
            return None
        node = parents.get(id(node))
    return at, value


_BRANCHES = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.ExceptHandler, ast.match_case, ast.IfExp)


def _output_of(ctx: FileContext, scope: ast.AST, expr: ast.expr, line: int, on_device: dict[int, ev.Event], depth: int = 0) -> ev.Event | None:
    """The forward of a model on the device whose output ``expr`` is (``model(x)``, ``out = model(x)``, ``out.squeeze()``,
    ``logits, _ = model(x)``, ``out[0]``)."""
    if depth > 4:
        return None
    expr = _through_keepers(expr)
    if isinstance(expr, ast.Subscript):
        expr = expr.value
    if isinstance(expr, ast.Call):
        return on_device.get(id(expr))
    if isinstance(expr, ast.Name):
        found = _value(ctx, scope, expr.id, line)
        if found is None:
            return None
        at, value = found
        if isinstance(value, Element):
            value = value.value
        if isinstance(value, ast.expr):
            return _output_of(ctx, scope, value, at, on_device, depth + 1)
    return None


def _from_loader(ctx: FileContext, analysis, scope: ast.AST, name: str, line: int, depth: int) -> str | None:
    """Where ``name`` at ``line`` got a tensor on the CPU: "loaded" for (a part of) a batch as a DataLoader of the file
    hands it out, "built" for a tensor made on the CPU (``torch.LongTensor([...])``, ``torch.from_numpy(a)``); else None."""
    if depth > 6:
        return None
    found = _value(ctx, scope, name, line)
    if found is None:
        return None
    at, value = found
    if isinstance(value, (ast.For, ast.AsyncFor)):
        keys = {f.iter_key for f in analysis.frames if f.node is value and f.iter_key}
        return "loaded" if cpu_loaders(ctx, keys) else None
    if isinstance(value, Element):
        value = value.value
    if not isinstance(value, ast.expr):
        return None
    value = _through_keepers(value)
    if isinstance(value, ast.Subscript):
        value = value.value
    if isinstance(value, ast.Call) and (ctx.call_name(value) or "").startswith("torch") \
            and (ctx.call_name(value) or "").endswith(".Variable") and value.args:
        value = _through_keepers(value.args[0])  # `Variable(x)` (before PyTorch 0.4) wraps the tensor where it is
    if isinstance(value, ast.Call) and _built_on_cpu(ctx, value):
        return "built"
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "next" and value.args \
            and isinstance(value.args[0], ast.Name):
        # `images, labels = next(data_iter)` where every assignment of `data_iter` is `iter(loader)` (also the one
        # that restarts it at each epoch's end)
        sources = [v for _, v in definitions(ctx, scope).get(value.args[0].id, [])]
        if sources and all(isinstance(s, ast.Call) and isinstance(s.func, ast.Name) and s.func.id == "iter" and len(s.args) == 1
                           for s in sources):
            return "loaded" if cpu_loaders(ctx, {key_of(s.args[0]) for s in sources}) else None  # type: ignore[attr-defined]
        return None
    if isinstance(value, ast.Name):
        return _from_loader(ctx, analysis, scope, value.id, at, depth + 1)
    return None


_LEGACY = {"LongTensor", "FloatTensor", "DoubleTensor", "IntTensor", "ByteTensor", "BoolTensor", "HalfTensor", "Tensor", "tensor"}
_FACTORIES = {"zeros", "ones", "randn", "rand", "randint", "arange", "empty", "full", "eye", "linspace"}


def _built_on_cpu(ctx: FileContext, call: ast.Call) -> bool:
    """``torch.LongTensor([...])``, ``torch.tensor([...])``, ``torch.from_numpy(a)``, ``torch.zeros(3, 4)``: a new
    tensor on the CPU (no ``device=``; none of ``set_default_device``, ``set_default_tensor_type``, ``with torch.device``
    in the file, which would place it elsewhere)."""
    qual = ctx.call_name(call) or ""
    head, _, last = qual.rpartition(".")
    if head != "torch" or kwarg(call, "device") is not None or _default_device(ctx):
        return False
    if last in _LEGACY:  # of data (a tensor given to `torch.tensor` keeps its device)
        return bool(call.args) and isinstance(call.args[0], (ast.List, ast.ListComp, ast.Tuple, ast.Constant))
    return last == "from_numpy" or last in _FACTORIES


def _default_device(ctx: FileContext) -> bool:
    if "set_default_device" in ctx.source or "set_default_tensor_type" in ctx.source:
        return True
    return any(isinstance(n, (ast.With, ast.AsyncWith)) and any(isinstance(i.context_expr, ast.Call)
               and (ctx.call_name(i.context_expr) or "") == "torch.device" for i in n.items) for n in ctx.nodes)


def _same_object(ctx: FileContext, forward: ev.Event, scopes: dict[int, int]) -> bool:
    """Keys are file-wide, objects are not: the move must be in the forward's own function, or (for ``self.model``)
    in a method of the same class; a module-level move reaches the module-level code below it and the helpers that
    code calls (a later notebook cell's `model.to(device)` never reaches an earlier cell's loop); a move in a function
    reaches the helpers it calls after the move."""
    module = scopes.get(id(ctx.tree))
    if module is not None and (forward.sites[0].caller is ctx.tree if forward.sites else forward.scope is ctx.tree):
        return module < forward.entry_line
    if id(forward.scope) in scopes:
        return True
    if any(id(site.caller) in scopes and scopes[id(site.caller)] < site.call.lineno for site in forward.sites):
        return True  # `train(model, ...)` called by the function that moved the model, after the move
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
    back: set[str] = set()  # models also moved back to the CPU (`model.cpu()` before an export or a CPU evaluation)
    for node in ctx.nodes_of(ast.Assign, ast.Expr):
        if not isinstance(node, (ast.Assign, ast.Expr)):
            continue  # every case below is one of these: one test for the other nodes of the file
        call = None
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and method_name(node.value) in MOVES:
            call, key = node.value, key_of(node.targets[0])
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and method_name(node.value) in MOVES:
            call, key = node.value, key_of(node.value.func.value)  # type: ignore[attr-defined]
        elif isinstance(node, (ast.Assign, ast.Expr)) and isinstance(node.value, ast.Call) and method_name(node.value) == "cpu":
            back.add(key_of(node.value.func.value) or "")  # type: ignore[attr-defined]
        if call is None or key is None or not ctx.is_model(key):
            continue
        target = call.args[0] if call.args else kwarg(call, "device")
        if _cpu(ctx, target):
            back.add(key)
            continue  # moved to the CPU (`device = "cpu"`): no other device to mismatch
        where = keys.setdefault(key, {})
        scope = id(ctx.scope_of(node))
        where[scope] = min(where.get(scope, node.lineno), node.lineno)
    return {key: where for key, where in keys.items() if key not in back}


def _unmoved(ctx: FileContext, analysis, scope: ast.AST, line: int, name: ast.Name) -> str | None:
    """Where the input ``name`` got its tensor on the CPU ("loaded", "built", or "parameter": a batch parameter of
    which the function moves other entries), else None."""
    origin = _from_loader(ctx, analysis, scope, name.id, line, 0)
    if origin is not None:
        return origin
    if any(at < line for at, _ in definitions(ctx, scope).get(name.id, [])) or scope is ctx.tree:
        return None
    params = {a.arg for a in scope.args.args}  # type: ignore[attr-defined]
    if name.id not in params:
        return None
    return "parameter" if any(isinstance(n, ast.Call) and method_name(n) in MOVES and isinstance(n.func.value, ast.Subscript)  # type: ignore[attr-defined]
               and key_of(n.func.value.value) == name.id for n in scope_nodes(ctx, scope)) else None  # type: ignore[attr-defined]


def _not_a_module_here(ctx: FileContext, forward: ev.Event) -> bool:
    """Whether the forward sits in the ``else`` of ``if isinstance(net, nn.Module)``: there ``net`` is a plain function
    (a hand-written model), never the module that was moved to the device."""
    for node in ctx.members_of(forward.scope, ast.If):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Call) and key_of(node.test.func) == "isinstance" \
                and len(node.test.args) == 2 and key_of(node.test.args[0]) == forward.key \
                and "Module" in ast.unparse(node.test.args[1]) \
                and any(sub is forward.node for stmt in node.orelse for sub in walk(stmt)):
            return True
    return False
