"""Small facts about syntax nodes: dotted keys, keyword arguments, method names."""

from __future__ import annotations

import ast
from collections.abc import Iterator

_IDENTITY_METHODS = {"to", "cuda", "cpu", "float", "half", "double", "bfloat16", "train", "eval", "requires_grad_"}


def key_of(node: ast.AST | None) -> str | None:
    """``a.b.c`` for a chain of names and attributes; None for anything else."""
    kind = node.__class__  # asked about a million times per run: exact class tests (ast never subclasses them)
    if kind is _Name:  # the common case: no list, no join
        return node.id  # type: ignore[union-attr]
    if kind is not _Attribute:
        return None
    known = node.__dict__.get(_KEY, _UNSEEN)  # an attribute chain is asked about again and again: joined once
    if known is _UNSEEN:
        known = node.__dict__[_KEY] = _chain_key(node)
    return known  # type: ignore[return-value]


def _chain_key(node: ast.AST) -> str | None:
    parts = []
    while node.__class__ is _Attribute:
        parts.append(node.attr)  # type: ignore[union-attr]
        node = node.value  # type: ignore[union-attr]
    if node.__class__ is not _Name:
        return None
    parts.append(node.id)  # type: ignore[union-attr]
    return ".".join(reversed(parts))


_Name, _Attribute = ast.Name, ast.Attribute
_KEY, _UNSEEN = "_trainwell_key", object()  # where a chain's key is kept on its node (the tree is never rewritten)


def kwarg(call: ast.Call, name: str) -> ast.expr | None:
    """The value of keyword ``name`` in ``call``, or None."""
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    return None


def has_star_kwargs(call: ast.Call) -> bool:
    return any(k.arg is None for k in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args)


def method_name(call: ast.AST) -> str | None:
    """``step`` for ``anything.step(...)``."""
    if call.__class__ is _Call and call.func.__class__ is _Attribute:  # type: ignore[attr-defined]
        return call.func.attr  # type: ignore[attr-defined]
    return None


_Call = ast.Call


def strip_identity(node: ast.expr) -> ast.expr:
    """``Net().to(device).train()`` -> ``Net()``: calls that return the same module."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _IDENTITY_METHODS:
        node = node.func.value
    return node


def children(node: ast.AST) -> list[ast.AST]:
    """``list(ast.iter_child_nodes(node))`` (ctx markers included), without its two generators."""
    found: list[ast.AST] = []
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, ast.AST):
            found.append(value)
        elif isinstance(value, list):
            found.extend(item for item in value if isinstance(item, ast.AST))
    return found


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk(node)``: the same nodes (ctx markers included) in the same breadth-first order, at half the cost
    (no generator per node; a Constant has no children and a Name only its ctx)."""
    todo = [node]
    append, AST, Name, Constant = todo.append, ast.AST, ast.Name, ast.Constant
    for current in todo:  # a list read while it grows: the queue of ast.walk
        if current.__class__ is Name:
            append(current.ctx)  # type: ignore[attr-defined]
        elif current.__class__ is not Constant:
            for name in current._fields:
                value = getattr(current, name, None)
                if isinstance(value, AST):
                    append(value)
                elif isinstance(value, list):
                    for item in value:
                        if isinstance(item, AST):
                            append(item)
        yield current


def argument_for(call: ast.Call, fn: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> ast.expr | None:
    """The expression ``call`` gives parameter ``name`` of ``fn``, or its default where the call leaves it out;
    None when that is not known (``*args`` or ``**kwargs`` in the call, no such parameter, nothing given)."""
    if has_star_kwargs(call):
        return None
    a = fn.args
    positional = [p.arg for p in [*a.posonlyargs, *a.args]]
    if name in positional:
        index = positional.index(name)
        if index < len(call.args):
            return call.args[index]
        given = kwarg(call, name) if index >= len(a.posonlyargs) else None
        first_default = len(positional) - len(a.defaults)
        return given if given is not None else a.defaults[index - first_default] if index >= first_default else None
    if name in [p.arg for p in a.kwonlyargs]:
        return kwarg(call, name) or a.kw_defaults[[p.arg for p in a.kwonlyargs].index(name)]
    return None
