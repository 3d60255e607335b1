"""Where a value comes from: the assignments that reach a name, and whether a tensor keeps its graph.

Deliberately simple: within one function (or the module body), the latest
assignment above the use wins; branches are not told apart. That is enough for
training code, where the loss is built a few lines above ``backward()``.
"""

from __future__ import annotations

import ast
from trainwell.lint.context import FileContext, key_of

CUTS = {"detach", "item", "tolist", "numpy", "cpu_numpy"}
_BUILTINS = set(dir(__import__("builtins")))
_REWRAP = {"tensor", "as_tensor", "from_numpy", "scalar_tensor"}


def scope_nodes(ctx: FileContext, scope: ast.AST) -> list[ast.AST]:
    """Every node of ``scope``'s own body (a function's or the module's), not inside nested functions or classes."""
    return ctx.scope_members.get(id(scope), [])


def definitions(ctx: FileContext, scope: ast.AST) -> dict[str, list[tuple[int, ast.AST]]]:
    """name -> [(line, value expression or the assigning statement)], sorted by line; cached per scope."""
    cache = ctx.__dict__.setdefault("_definitions", {})
    if id(scope) in cache:
        return cache[id(scope)]
    found: dict[str, list[tuple[int, ast.AST]]] = {}
    for node in scope_nodes(ctx, scope):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                _bind(found, target, node.value, node.lineno)
        elif isinstance(node, (ast.AnnAssign,)) and node.value is not None:
            _bind(found, node.target, node.value, node.lineno)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            found.setdefault(node.target.id, []).append((node.lineno, node))
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            _bind(found, node.target, node, node.lineno)
        elif isinstance(node, ast.NamedExpr):
            found.setdefault(node.target.id, []).append((node.lineno, node.value))
    for values in found.values():
        values.sort(key=lambda item: item[0])
    cache[id(scope)] = found
    return found


def _bind(found: dict[str, list[tuple[int, ast.AST]]], target: ast.AST, value: ast.AST, line: int) -> None:
    if isinstance(target, ast.Name):
        found.setdefault(target.id, []).append((line, value))
    elif isinstance(target, (ast.Tuple, ast.List)):
        values = value.elts if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) else None
        for index, element in enumerate(target.elts):
            _bind(found, element, values[index] if values is not None else value, line)


def reaching(ctx: FileContext, scope: ast.AST, name: str, line: int) -> list[ast.AST]:
    """The values assigned to ``name`` that reach ``line``: the latest plain assignment and the augmented ones after it."""
    out: list[ast.AST] = []
    for def_line, value in reversed(definitions(ctx, scope).get(name, [])):
        if def_line >= line:
            continue
        out.append(value)
        if not isinstance(value, ast.AugAssign):
            break
    return out


class Graph:
    """Does an expression carry an autograd graph back to a model? (``connected``), and was it cut on the way? (``cut``)."""

    def __init__(self, ctx: FileContext, scope: ast.AST, line: int) -> None:
        self.ctx, self.scope, self.line = ctx, scope, line
        self.cut = False
        self._seen: set[tuple[str, int]] = set()

    def connected(self, node: ast.AST | None, depth: int = 0) -> bool:
        if node is None or depth > 12:
            return False
        if isinstance(node, ast.Attribute) and node.attr == "data":
            self.cut = True
            return False
        if isinstance(node, ast.Call):
            return self._call(node, depth)
        if isinstance(node, ast.Name):
            if self.ctx.is_model(node.id):
                return False  # a module is not a tensor; its outputs are (see _call)
            values = reaching(self.ctx, self.scope, node.id, self.line)
            if (node.id, self.line) in self._seen:
                return False
            self._seen.add((node.id, self.line))
            result = False
            for value in values:
                if isinstance(value, ast.AugAssign):
                    result |= self.connected(value.value, depth + 1)
                elif isinstance(value, (ast.For, ast.AsyncFor)):
                    continue  # loop targets are data
                else:
                    result |= self.connected(value, depth + 1)
            return result
        if isinstance(node, ast.Attribute):
            return False
        if isinstance(node, (ast.Lambda, ast.Constant)):
            return False
        return any(self.connected(child, depth + 1) for child in ast.iter_child_nodes(node))

    def _helper(self, func: ast.expr) -> ast.AST | None:
        if isinstance(func, ast.Name):
            return self.ctx.functions.get(func.id) or self.ctx.nested_functions.get(func.id)
        if isinstance(func, ast.Attribute) and key_of(func.value) == "self":
            return next((ms[func.attr] for ms in self.ctx.methods.values() if func.attr in ms), None)
        return None

    def _opaque(self, func: ast.expr) -> bool:
        """A plain-name callable (or ``self.attr``) that is neither imported, nor a local def or class, nor a builtin."""
        key = key_of(func)
        if key is None or self.ctx.qualname(func) is not None or self.ctx.role(key) is not None:
            return False
        if isinstance(func, ast.Name):
            return func.id not in self.ctx.functions and func.id not in self.ctx.classes and func.id not in _BUILTINS
        return isinstance(func, ast.Attribute) and key_of(func.value) == "self"

    def _call(self, call: ast.Call, depth: int) -> bool:
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in CUTS:
            self.cut = True
            return False
        qual = self.ctx.call_name(call) or ""
        if qual.rsplit(".", 1)[-1] in _REWRAP and qual.startswith("torch") or (isinstance(func, ast.Name) and func.id in ("float", "int")):
            # a new tensor: it cuts the graph only when it wraps a value that had one (`torch.tensor(loss.item())`)
            cut_before = self.cut
            self.cut = False
            wrapped = any(self.connected(a, depth + 1) for a in call.args)
            self.cut = cut_before or wrapped or self.cut
            return False
        key = key_of(func)
        if key is not None and self.ctx.is_model(key):
            return True
        if isinstance(func, ast.Attribute) and func.attr == "forward" and self.ctx.is_model(key_of(func.value)):
            return True
        helper = self._helper(func)
        if helper is not None:  # a local function or method: its arguments or its returns
            if any(self.connected(a, depth + 1) for a in [*call.args, *(k.value for k in call.keywords)]):
                return True
            inner = Graph(self.ctx, helper, 10**9)
            inner._seen = self._seen
            found = any(inner.connected(n.value, depth + 1) for n in scope_nodes(self.ctx, helper) if isinstance(n, ast.Return))
            self.cut |= inner.cut
            return found
        if self._opaque(func):
            return True  # `op(x)`, `self.head(x)`: a callable we cannot see may hold parameters
        parts = [func.value] if isinstance(func, ast.Attribute) else []
        parts += list(call.args) + [k.value for k in call.keywords]
        return any(self.connected(part, depth + 1) for part in parts)
