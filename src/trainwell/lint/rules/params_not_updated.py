"""TW603 (static side): every parameter an optimizer holds is frozen before its first step and never unfrozen.

Premises, each read from the file: an optimizer is built over ``X.parameters()``
(or parameter groups of such calls), nothing else; in the same function a
statement freezes a module ``M`` that is ``X`` or holds it (``M.requires_grad_(False)``,
or ``for p in M.parameters(): p.requires_grad = False`` with no condition), and no
later statement there may add parameters to ``M`` (a new head assigned,
``M`` handed to a helper that adds adapters);
nothing in the file ever sets ``requires_grad`` back on (progressive unfreezing);
and that optimizer steps in a training loop, none of its steps before the freeze.
The other side of TW603 (parameters missing from every optimizer) is the runtime
checker's.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from trainwell.diagnostic import Finding
from trainwell.lint import events as ev
from trainwell.lint.context import FileContext, key_of, kwarg, method_name
from trainwell.lint.dataflow import scope_nodes
from trainwell.lint.rules import TRAINING
from trainwell.lint.rules._data import trains
from trainwell.lint.syntax import walk

CODE = "TW603"
REQUIRES = TRAINING
_WRAPPERS = {"DistributedDataParallel", "DataParallel", "DDP", "compile"}  # wrap a model, add no parameter


def check(ctx: FileContext) -> Iterator[Finding]:
    if "requires_grad" not in ctx.source or _unfreezes(ctx):
        return
    scopes = [ctx.tree, *ctx.functions.values(), *(m for ms in ctx.methods.values() for m in ms.values())]
    for scope in scopes:
        nodes = scope_nodes(ctx, scope)
        freezes = [(node, key) for node in nodes for key in [_frozen(node)] if key is not None]
        if not freezes:
            continue
        for node in nodes:
            held = _optimizer_over(ctx, node)
            if held is None:
                continue
            opt_key, groups = held
            covering = [(f, k) for f, k in freezes if all(_covers(k, g) for g in groups)]
            if not covering:
                continue
            freeze, frozen = covering[0]
            steps = [e for e in ctx.analysis.events if e.kind == ev.STEP and e.key == opt_key and e.frame is not None]
            if not steps or not any(trains(e.frame) for e in steps):
                continue  # an optimizer built for a phase that never runs here
            if _changed_after(ctx, nodes, freeze, frozen, _training_ends(steps, {id(n) for n in nodes})):
                continue  # a new head or adapters may be trainable: `model.fc = nn.Linear(...)`, `add_lora(model)`
            if any(e.scope is scope and e.line < freeze.lineno for e in steps):
                continue  # it stepped before the freeze
            held_text = ", ".join(f"`{g}.parameters()`" for g in groups)
            yield ctx.finding(
                CODE, freeze,
                f"`{ctx.snippet(freeze)}` freezes `{frozen}`, which holds every parameter `{opt_key}` optimizes "
                f"({held_text}, line {node.lineno}), and nothing sets requires_grad back on: no parameter of the "
                "optimizer gets a gradient, so every step updates nothing and the run trains nothing.",
                f"Freeze only the part that should stay fixed (e.g. `{frozen}.backbone`), or build the optimizer over "
                "the parameters that stay trainable and unfreeze them before training.",
            )
            break


def _optimizer_over(ctx: FileContext, node: ast.AST) -> tuple[str, list[str]] | None:
    """(optimizer key, the module keys whose parameters it holds) for ``opt = Adam(m.parameters(), ...)``
    or parameter groups ``[{"params": a.parameters()}, ...]``; None when anything else is passed."""
    if not isinstance(node, ast.Assign) or len(node.targets) != 1 or not isinstance(node.value, ast.Call):
        return None
    role = ctx.classify(node.value)
    key = key_of(node.targets[0])
    if role is None or role.kind != "optimizer" or key is None:
        return None
    params = node.value.args[0] if node.value.args else kwarg(node.value, "params")
    if params is None:
        return None
    items = params.elts if isinstance(params, (ast.List, ast.Tuple)) else [params]
    groups = []
    for item in items:
        if isinstance(item, ast.Dict):
            values = [v for k, v in zip(item.keys, item.values) if isinstance(k, ast.Constant) and k.value == "params"]
            if len(values) != 1:
                return None
            item = values[0]
        module = _parameters_of(item)
        if module is None:
            return None
        groups.append(module)
    return (key, groups) if groups else None


def _parameters_of(node: ast.AST) -> str | None:
    """``m`` for ``m.parameters()``, else None."""
    if isinstance(node, ast.Call) and method_name(node) == "parameters" and not node.args:
        return _module_key(node.func.value)  # type: ignore[attr-defined]
    return None


def _module_key(node: ast.expr) -> str | None:
    """``model.fc`` for an attribute chain, ``model[2]`` / ``model["head"]`` with constant indices; else None."""
    key = key_of(node)
    if key is not None:
        return key
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        inner = _module_key(node.value)
        return f"{inner}[{node.slice.value!r}]" if inner is not None else None
    if isinstance(node, ast.Attribute):
        inner = _module_key(node.value)
        return f"{inner}.{node.attr}" if inner is not None else None
    return None


def _frozen(node: ast.AST) -> str | None:
    """The module a statement freezes whole: ``m.requires_grad_(False)``, or an unconditional
    ``for p in m.parameters(): p.requires_grad = False`` (also over ``named_parameters()``)."""
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and method_name(node.value) == "requires_grad_":
        call = node.value
        flag = call.args[0] if call.args else kwarg(call, "requires_grad")
        if isinstance(flag, ast.Constant) and flag.value is False:
            return _module_key(call.func.value)  # type: ignore[attr-defined]
        return None
    if not isinstance(node, ast.For) or not isinstance(node.iter, ast.Call):
        return None
    name = method_name(node.iter)
    if name not in ("parameters", "named_parameters") or node.iter.args:
        return None
    target = node.target
    if name == "named_parameters":
        target = target.elts[-1] if isinstance(target, ast.Tuple) and len(target.elts) == 2 else None
    if not isinstance(target, ast.Name):
        return None
    for stmt in node.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and key_of(stmt.targets[0]) == f"{target.id}.requires_grad":
            if isinstance(stmt.value, ast.Constant) and stmt.value.value is False:
                return _module_key(node.iter.func.value)  # type: ignore[attr-defined]
    return None


def _training_ends(steps: list[ev.Event], scope_nodes_ids: set[int]) -> int | None:
    """The last line of the outermost loops, in this scope, that run the optimizer's steps (None when a step runs
    from a loop of another scope): what the code does after them cannot make that training train."""
    ends = []
    for event in steps:
        frame = event.frame
        while frame.parent is not None and frame.parent.kind == "loop":  # type: ignore[union-attr]
            frame = frame.parent  # type: ignore[union-attr]
        if frame.kind != "loop" or id(frame.node) not in scope_nodes_ids:  # type: ignore[union-attr]
            return None
        ends.append(frame.node.end_lineno or frame.node.lineno)  # type: ignore[union-attr]
    return max(ends) if ends else None


def _changed_after(ctx: FileContext, nodes: list[ast.AST], freeze: ast.stmt, frozen: str, until: int | None = None) -> bool:
    """Whether a statement after the freeze (and before ``until``, the end of the training) may add parameters to
    ``frozen``: it assigns an attribute or item under it, or hands it (or its root object) to a call that may (any
    call but a function of this file that assigns no attribute, item or ``setattr``, and the DDP / DataParallel /
    ``torch.compile`` wrappers, which add none)."""
    root = frozen.split(".", 1)[0].split("[", 1)[0]
    after = [n for n in nodes if (freeze.end_lineno or freeze.lineno) < getattr(n, "lineno", 0) <= (until or 10**9)]
    for node in after:
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, (ast.Attribute, ast.Subscript)) and _root_name(target) == root \
                        and not (isinstance(target, ast.Attribute) and target.attr == "requires_grad"):
                    return True
        elif isinstance(node, ast.Call):
            given = [*node.args, *(k.value for k in node.keywords)]
            if any(_root_name(a) == root for a in given if isinstance(a, (ast.Name, ast.Attribute, ast.Subscript))) \
                    and _may_add_parameters(ctx, node, {root}):
                return True
            if method_name(node) in ("add_module", "register_module", "register_parameter", "apply") and \
                    _root_name(node.func.value) == root:  # type: ignore[attr-defined]
                return True
    return False


def _may_add_parameters(ctx: FileContext, call: ast.Call, roots: set[str], depth: int = 3) -> bool:
    """False for a call that only reads a model (``torch.save``, ``print``), and for a function of the tree that
    never assigns an attribute or item of the parameter it receives the module through, and hands that parameter on
    only to such calls (an evaluation helper that calls another), followed ``depth`` calls deep."""
    name = ctx.call_name(call) or key_of(call.func) or ""
    if name in ev.READ_ONLY or name.rsplit(".", 1)[-1] in _WRAPPERS:
        return False
    fn = ctx.functions.get(key_of(call.func) or "")
    if fn is None and ctx.project is not None and (found := ctx.project.function(ctx, call.func)) is not None:
        fn = found[1]  # `evaluate(dataset, model)` imported from another file of the project
    if fn is None or depth == 0:
        return True
    names = {p.arg for p, a in zip(fn.args.args, call.args) if _root_name(a) in roots}
    names |= {k.arg for k in call.keywords if k.arg is not None and _root_name(k.value) in roots}
    if not names or any(isinstance(a, ast.Starred) for a in call.args):
        return True
    home = ctx.home(fn)
    for node in walk(fn):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, (ast.Attribute, ast.Subscript)) and _root_name(t) in names
                   and not (isinstance(t, ast.Attribute) and t.attr == "requires_grad") for t in targets):
                return True
        elif isinstance(node, ast.Call):
            given = [*node.args, *(k.value for k in node.keywords)]
            if any(isinstance(a, ast.Name) and a.id in names for a in given) and _may_add_parameters(home, node, names, depth - 1):
                return True  # handed on to a call that may (setattr(model, ...), a helper we cannot read)
            if (method_name(node) or "").startswith(("add_module", "register_")) and _root_name(node.func.value) in names:  # type: ignore[attr-defined]
                return True
    return False


def _root_name(node: ast.expr) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _covers(frozen: str | None, held: str) -> bool:
    return frozen is not None and (held == frozen or held.startswith((frozen + ".", frozen + "[")))


def _unfreezes(ctx: FileContext) -> bool:
    """Whether anything in the file may set requires_grad on (``requires_grad_()``, ``requires_grad_(True)``,
    ``x.requires_grad = <anything but False>``)."""
    for node in ctx.nodes:
        if isinstance(node, ast.Call) and method_name(node) == "requires_grad_":
            flag = node.args[0] if node.args else kwarg(node, "requires_grad")
            if not (isinstance(flag, ast.Constant) and flag.value is False):
                return True
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Attribute) and t.attr == "requires_grad" for t in targets):
                value = node.value
                if not (isinstance(value, ast.Constant) and value.value is False):
                    return True
    return False
