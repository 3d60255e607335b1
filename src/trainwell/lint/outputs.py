"""What kind of values a tensor expression holds: probabilities, log-probabilities or raw logits.

Used by the loss rules: a loss call is told apart from its input by following
the input back through local assignments, model forwards (a local module's
``forward`` return, the last layer of an ``nn.Sequential``) and activations.
"""

from __future__ import annotations

import ast

from trainwell.lint.context import FileContext, key_of, method_name, strip_identity, walk
from trainwell.lint.dataflow import reaching

SOFTMAX, SIGMOID, LOG_PROBS, RAW, UNKNOWN = "softmax", "sigmoid", "log_probs", "raw", "unknown"
_ACTIVATIONS = {"softmax": SOFTMAX, "sigmoid": SIGMOID, "log_softmax": LOG_PROBS, "log": LOG_PROBS, "logsigmoid": LOG_PROBS}
_MODULES = {"Softmax": SOFTMAX, "Sigmoid": SIGMOID, "LogSoftmax": LOG_PROBS, "LogSigmoid": LOG_PROBS, "Softmax2d": SOFTMAX}
_NEUTRAL = {"float", "double", "half", "view", "reshape", "squeeze", "unsqueeze", "flatten", "contiguous", "to", "permute", "transpose"}


def kind(ctx: FileContext, expr: ast.AST | None, scope: ast.AST, line: int, depth: int = 0) -> str:
    """SOFTMAX, SIGMOID, LOG_PROBS, RAW (a model's or layer's output without activation) or UNKNOWN."""
    if expr is None or depth > 8:
        return UNKNOWN
    if isinstance(expr, ast.Name):
        values = reaching(ctx, scope, expr.id, line)
        if len(values) != 1 or isinstance(values[0], (ast.AugAssign, ast.For, ast.AsyncFor)):
            return UNKNOWN
        branches = _assignments_reaching(scope, expr.id, line) if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) else []
        if len(branches) > 1:  # `if probabilities: out = torch.sigmoid(out)`: one kind on every path, or unknown
            kinds = {kind(ctx, v.value, scope, v.lineno, depth + 1) for v in branches}
            return kinds.pop() if len(kinds) == 1 else UNKNOWN
        return kind(ctx, values[0], scope, getattr(values[0], "lineno", line), depth + 1)
    if isinstance(expr, ast.Subscript):
        return kind(ctx, expr.value, scope, line, depth + 1)  # rows of probabilities are probabilities (`output[mask]`)
    if not isinstance(expr, ast.Call):
        return UNKNOWN
    qual = ctx.call_name(expr) or ""
    if qual.endswith("parallel.data_parallel") and len(expr.args) >= 2:  # data_parallel(self.main, x) runs self.main(x)
        expr = ast.Call(func=expr.args[0], args=[expr.args[1]], keywords=[])
        qual = ""
    func = expr.func
    last = qual.rsplit(".", 1)[-1] if qual else (func.attr if isinstance(func, ast.Attribute) else "")
    if qual.startswith("torch") and last in _ACTIVATIONS:
        return _ACTIVATIONS[last]
    if isinstance(func, ast.Attribute):
        if func.attr in _ACTIVATIONS and not qual:
            return _ACTIVATIONS[func.attr]
        if func.attr in _NEUTRAL:
            return kind(ctx, func.value, scope, line, depth + 1)
    role = ctx.role(key_of(func))
    if role is not None and role.kind == "model" and role.node is not None:
        if role.cls in _MODULES:
            return _MODULES[role.cls]
        if "home" in role.info:  # a module class of another file of the tree: read in its own file
            return model_output(role.info["home"], None, role.cls, depth)
        return model_output(ctx, role.node, role.cls, depth)
    built = _built_from_project_class(ctx, key_of(func)) if role is None or role.node is None else None
    if built is not None:
        return model_output(built[0], None, built[1], depth)
    if key_of(func) in ctx.functions:
        fn = ctx.functions[key_of(func)]  # type: ignore[index]
        return _returns(ctx, fn, depth)
    return UNKNOWN


def model_output(ctx: FileContext, node: ast.AST | None, cls: str, depth: int = 0) -> str:
    """The kind of output a model constructor's instances produce."""
    if cls == "Sequential" and isinstance(node, ast.Call) and node.args:
        layer = node.args[-1]
        if isinstance(layer, ast.Starred):
            layer = _last_listed(ctx, node, layer.value)
        if isinstance(layer, ast.Call):
            name = (ctx.call_name(layer) or "").rsplit(".", 1)[-1]
            if name in _MODULES:
                return _MODULES[name]
            if name in ("Linear", "Conv1d", "Conv2d", "Bilinear", "LazyLinear"):
                return RAW
        return UNKNOWN
    if cls in ctx.classes:
        forward = ctx.methods.get(cls, {}).get("forward")
        if forward is not None:
            return _returns(ctx, forward, depth, cls)
    return UNKNOWN


def _last_listed(ctx: FileContext, call: ast.Call, listed: ast.expr) -> ast.expr | None:
    """The last layer of ``nn.Sequential(*layers)``: what the statements of the function's own body put last into
    ``layers`` before the call (``layers = [...]``, ``layers += [...]``, ``layers.append(...)``,
    ``layers.extend([...])``); None where one of them sits in a branch or a loop, or is anything else."""
    if not isinstance(listed, ast.Name):
        return None
    fn = next((f for f in [*ctx.functions.values(), *ctx.nested_functions.values(), *(m for ms in ctx.methods.values() for m in ms.values())]
               if any(n is call for n in ctx.members(f))), None)
    last: ast.expr | None = None
    members = sorted((n for n in ctx.members(fn) if hasattr(n, "lineno")), key=lambda n: (n.lineno, n.col_offset)) if fn is not None else []
    for node in members:
        changes = isinstance(node, (ast.Assign, ast.AugAssign)) and listed.id in {
            n.id for t in (node.targets if isinstance(node, ast.Assign) else [node.target]) for n in walk(t) if isinstance(n, ast.Name)} \
            or isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and key_of(node.func.value) == listed.id
        if not changes or node.lineno > call.lineno:  # type: ignore[attr-defined]
            continue
        statement = node if isinstance(node, ast.stmt) else next((s for s in fn.body if isinstance(s, ast.Expr) and s.value is node), None)  # type: ignore[union-attr]
        if statement is None or statement not in fn.body:  # type: ignore[union-attr]
            return None  # in a branch or a loop: the last layer depends on the path
        value = statement.value if isinstance(statement, (ast.Assign, ast.AugAssign)) else node
        if isinstance(value, ast.Call) and method_name(value) == "append" and len(value.args) == 1:
            last = value.args[0]
        elif isinstance(value, ast.Call) and method_name(value) == "extend" and len(value.args) == 1:
            value = value.args[0]
        if isinstance(value, (ast.List, ast.Tuple)) and value.elts:
            last = value.elts[-1]
        elif not (isinstance(value, ast.Call) and method_name(value) == "append"):
            return None
    return last


def _returns(ctx: FileContext, fn: ast.AST, depth: int, cls: str | None = None) -> str:
    kinds = set()
    for node in walk(fn):
        if isinstance(node, ast.Return) and node.value is not None:
            kinds.add(_layer_kind(ctx, node.value, fn, node.lineno, depth + 1, cls))
    return kinds.pop() if len(kinds) == 1 else UNKNOWN


def _layer_kind(ctx: FileContext, expr: ast.AST, fn: ast.AST, line: int, depth: int, cls: str | None) -> str:
    """Inside a module's forward: ``self.fc(x)`` is RAW when ``self.fc`` is a Linear layer."""
    if isinstance(expr, ast.Name) and cls is not None and depth <= 8:
        values = _assignments_reaching(fn, expr.id, line)
        if len(values) > 1:  # `if use_sigmoid: out = torch.sigmoid(out)`: each branch's value, one kind or unknown
            kinds = {_layer_kind(ctx, v.value, fn, v.lineno, depth + 1, cls) for v in values}
            return kinds.pop() if len(kinds) == 1 else UNKNOWN
    found = kind(ctx, expr, fn, line, depth)
    if found != UNKNOWN or cls is None:
        return found
    if isinstance(expr, ast.Name):
        values = reaching(ctx, fn, expr.id, line)
        if len(values) == 1 and isinstance(values[0], ast.AST) and not isinstance(values[0], (ast.AugAssign, ast.For)):
            return _layer_kind(ctx, values[0], fn, getattr(values[0], "lineno", line), depth + 1, cls)
        return UNKNOWN
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and key_of(expr.func.value) == "self":
        init = ctx.methods.get(cls, {}).get("__init__")
        for node in walk(init) if init is not None else ():
            if isinstance(node, ast.Assign) and any(key_of(t) == f"self.{expr.func.attr}" for t in node.targets):
                name = (ctx.call_name(node.value) or "").rsplit(".", 1)[-1] if isinstance(node.value, ast.Call) else ""
                if name in _MODULES:
                    return _MODULES[name]
                if name in ("Linear", "Conv1d", "Conv2d", "Bilinear", "LazyLinear"):
                    return RAW
                if name == "Sequential":
                    return model_output(ctx, node.value, "Sequential", depth + 1)
    return UNKNOWN


def _assignments_reaching(fn: ast.AST, name: str, line: int) -> list[ast.Assign]:
    """The plain assignments of ``name`` above ``line`` in ``fn`` from the last one that runs unconditionally
    (a statement of the function's own body) on: the values ``name`` may hold at ``line``."""
    found = sorted((n for n in walk(fn) if isinstance(n, ast.Assign) and n.lineno < line
                    and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)), key=lambda n: n.lineno)
    body = getattr(fn, "body", [])
    start = max((i for i, n in enumerate(found) if n in body), default=0)
    return found[start:]


def _built_from_project_class(ctx: FileContext, key: str | None) -> tuple[FileContext, str] | None:
    """(its file, the class) when every assignment of ``key`` in this file builds an ``nn.Module`` class that another
    file of the checked tree defines (``netD = Discriminator(ngpu).to(device)`` after ``from models import *``)."""
    if key is None or ctx.project is None:
        return None
    values = [strip_identity(a.value) for a in ctx.assignments_to({key})]
    found = {project_class(ctx, v.func) if isinstance(v, ast.Call) else None for v in values}
    if len(found) != 1:
        return None
    return found.pop()


def project_class(ctx: FileContext, func: ast.expr) -> tuple[FileContext, str] | None:
    """The file of the tree and the name of the ``nn.Module`` class that the callee ``func`` names through this
    file's imports (see :meth:`trainwell.lint.index.ProjectIndex.module_class`), or None."""
    return ctx.project.module_class(ctx, func) if ctx.project is not None else None
