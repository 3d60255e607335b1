"""The values an expression can hold where it is written, from the constants the file writes out.

A small, sound evaluation, not an interpreter. Within one file and a bounded
depth it follows: literals; a local name's assignments that may reach the read
(:mod:`trainwell.lint.bindings`), less those in a branch whose test is known to
go the other way; a module-level name assigned exactly once; a parameter of a
top-level function through every call of it in the file (none when another
file of the tree imports the function: a caller this file cannot see);
``d["key"]`` of a dict literal that nothing may have changed before the read;
``int()`` / ``float()``; comparisons, ``and`` / ``or`` / ``not``, ``+ - * //``.
Anything else is unknown, and :func:`values` answers None: a rule then reports
as if nothing were known.

Example: ``k = 1; if batch_size > MAX_GPU_BATCH_SIZE: k = batch_size // MAX_GPU_BATCH_SIZE`` with
``batch_size = int(config["batch_size"])``, every call passing ``{"batch_size": 16}`` and
``MAX_GPU_BATCH_SIZE = 16``: the ``if`` is never taken, so ``k`` can only be 1.
"""

from __future__ import annotations

import ast
import itertools
import operator
from collections.abc import Callable, Iterator

from trainwell.lint.bindings import Function, bindings, parameters
from trainwell.lint.context import FileContext
from trainwell.lint.syntax import argument_for, walk

MAX_DEPTH = 12  # steps of following names, calls and items: beyond them, unknown
MAX_VALUES = 16  # more possible values than this: unknown
_CONSTANTS = (int, float, str, bool, type(None))
_COMPARE: dict[type, Callable[[object, object], object]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt,
    ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
}
_ARITHMETIC: dict[type, Callable[[object, object], object]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
}
Source = tuple[ast.AST, "ast.Call | None"]  # an expression a name may hold, and the call that passed it (None: assigned)


class _Unknown(Exception):
    """Raised wherever the file does not say: the whole answer is then unknown."""


def values(ctx: FileContext, node: ast.expr) -> frozenset[object] | None:
    """Every value ``node`` can hold where it is written (int, float, str, bool or None), or None when unknown.

    Example:
        >>> import ast
        >>> from trainwell.lint.context import FileContext
        >>> source = "K = 2\\ndef f():\\n    k = 1\\n    if K > 4:\\n        k = 8\\n    return k\\n"
        >>> ctx = FileContext("t.py", source, ast.parse(source))
        >>> values(ctx, ctx.functions["f"].body[-1].value)
        frozenset({1})
    """
    try:
        return _Evaluation(ctx.home(node)).values(node, 0)
    except (_Unknown, RecursionError):
        return None


def always_one(ctx: FileContext, node: ast.expr) -> bool:
    """Whether every value ``node`` can hold is the int 1 (an accumulation count that accumulates nothing)."""
    found = values(ctx, node)
    return bool(found) and all(type(v) is int and v == 1 for v in found)  # type: ignore[union-attr]


class _Evaluation:
    """One question about one file; ``_testing`` holds the ``if`` tests being evaluated (a test that needs itself is unknown)."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.names = bindings(ctx)
        self._testing: set[int] = set()

    # -- expressions ---------------------------------------------------------
    def values(self, node: ast.AST, depth: int) -> frozenset[object]:
        if depth > MAX_DEPTH:
            raise _Unknown
        found = frozenset(self._values(node, depth + 1))
        if len(found) > MAX_VALUES:
            raise _Unknown
        return found

    def _values(self, node: ast.AST, depth: int) -> Iterator[object]:
        if isinstance(node, ast.Constant) and isinstance(node.value, _CONSTANTS):
            yield node.value
        elif isinstance(node, ast.Name):
            for value, _call in self._sources(node, depth):
                yield from self.values(value, depth)
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            yield from self._item(node.value, node.slice.value, node, depth)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("int", "float") \
                and len(node.args) == 1 and not node.keywords and not isinstance(node.args[0], ast.Starred) \
                and self._builtin(node.func):
            convert = int if node.func.id == "int" else float
            yield from (self._apply(convert, v) for v in self.values(node.args[0], depth))
        elif isinstance(node, ast.Compare) and all(type(op) in _COMPARE for op in node.ops):
            operands = [self.values(e, depth) for e in [node.left, *node.comparators]]
            for combination in self._product(operands):
                yield all(self._apply(_COMPARE[type(op)], a, b) for op, a, b in zip(node.ops, combination, combination[1:]))
        elif isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
            operands = [self.values(node.left, depth), self.values(node.right, depth)]
            if any(not isinstance(v, (int, float)) for vs in operands for v in vs):
                raise _Unknown  # `"a" * n` and the like: not counts
            yield from (self._apply(_ARITHMETIC[type(node.op)], a, b) for a, b in self._product(operands))
        elif isinstance(node, ast.BoolOp):
            yield from self._bool_op(node.op, node.values, depth)
        elif isinstance(node, ast.IfExp):
            truth = self.truth(node.test, depth)
            for branch, taken in ((node.body, True), (node.orelse, False)):
                if taken in truth:
                    yield from self.values(branch, depth)
        else:
            raise _Unknown

    def _bool_op(self, op: ast.boolop, operands: list[ast.expr], depth: int) -> Iterator[object]:
        """``a and b`` is ``a`` when ``a`` is falsy, else ``b`` (``or`` the other way): the rest only where reached."""
        first = self.values(operands[0], depth)
        stops = (lambda v: not v) if isinstance(op, ast.And) else bool
        yield from (v for v in first if stops(v) or len(operands) == 1)
        if len(operands) > 1 and any(not stops(v) for v in first):
            yield from self._bool_op(op, operands[1:], depth)

    def truth(self, test: ast.expr, depth: int) -> frozenset[bool]:
        """The truth values ``test`` can have. ``unknown and False`` is False: one operand decides."""
        if isinstance(test, ast.BoolOp):
            deciding = not isinstance(test.op, ast.And)  # the value that decides: False for `and`, True for `or`
            found: set[bool] = set()
            unknown = False
            for operand in test.values:
                try:
                    truth = self.truth(operand, depth + 1)
                except _Unknown:
                    unknown = True
                    continue
                if truth == {deciding}:
                    return frozenset({deciding})
                found |= truth
            if unknown:
                raise _Unknown
            return frozenset(found)
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return frozenset(not t for t in self.truth(test.operand, depth + 1))
        return frozenset(bool(v) for v in self.values(test, depth))

    @staticmethod
    def _apply(fn: Callable[..., object], *args: object) -> object:
        try:
            result = fn(*args)
        except (ValueError, TypeError, ArithmeticError):
            raise _Unknown from None
        if not isinstance(result, _CONSTANTS):
            raise _Unknown
        return result

    @staticmethod
    def _product(operands: list[frozenset[object]]) -> Iterator[tuple[object, ...]]:
        size = 1
        for vs in operands:
            size *= len(vs)
        if size > MAX_VALUES * MAX_VALUES:
            raise _Unknown
        return itertools.product(*operands)

    # -- names ---------------------------------------------------------------
    def _sources(self, name: ast.Name, depth: int) -> list[Source]:
        """What ``name`` may hold: each assignment that may reach it, and for a parameter what each call passes (or
        the default); unknown for any other kind of binding."""
        scope = self.names.scope(name)
        if scope is None:
            raise _Unknown
        plain, other = self.names.assignments(scope, name.id)
        if other:
            raise _Unknown
        if not self.names.local(scope, name.id):
            if scope is not self.ctx.tree and self.names.scope(scope) is not self.ctx.tree:
                raise _Unknown  # a free name of a nested function: the enclosing function's, not followed
            return self._global(name.id)
        found: list[Source] = [(a.value, None) for a in plain  # type: ignore[attr-defined]
                               if self.names.may_precede(a, name, scope) and not self._dead(a, scope, depth)]
        params = parameters(scope)  # type: ignore[arg-type]
        if name.id in params:
            if params[name.id] is None:
                raise _Unknown  # *args, **kwargs
            found += self._arguments(scope, name.id)  # type: ignore[arg-type]
        return found

    def _global(self, name: str) -> list[Source]:
        """A module-level name assigned exactly once, never declared ``global`` in a function, nothing else binding it."""
        plain, other = self.names.assignments(self.ctx.tree, name)
        if other or len(plain) != 1 or self.names.declared_global(name):
            raise _Unknown
        return [(plain[0].value, None)]  # type: ignore[attr-defined]

    def _builtin(self, func: ast.Name) -> bool:
        """Whether ``int`` (or ``float``) is the builtin: no scope around the call, nor the module, binds that name."""
        scope = self.names.scope(func)
        while scope is not None:
            if self.names.local(scope, func.id) or any(self.names.assignments(scope, func.id)):
                return False
            if scope is self.ctx.tree:
                return not self.names.declared_global(func.id)
            scope = self.names.scope(scope)
        return False

    def _dead(self, assignment: ast.AST, scope: ast.AST, depth: int) -> bool:
        """Whether ``assignment`` sits in a branch that never runs: the body of an ``if`` (or ``while``) whose test is
        always false, or the ``else`` of an ``if`` whose test is always true."""
        child, parent = assignment, self.names.parent.get(id(assignment))
        while parent is not None and parent is not scope:
            if isinstance(parent, (ast.If, ast.While)) and id(parent.test) not in self._testing:
                in_body = any(child is s for s in parent.body)
                if in_body or isinstance(parent, ast.If) and any(child is s for s in parent.orelse):
                    self._testing.add(id(parent.test))
                    try:
                        truth = self.truth(parent.test, depth)
                    except _Unknown:
                        truth = frozenset({True, False})
                    finally:
                        self._testing.discard(id(parent.test))
                    if truth == {not in_body}:
                        return True
            child, parent = parent, self.names.parent.get(id(parent))
        return False

    def _arguments(self, fn: Function, name: str) -> list[Source]:
        """(what the call gives parameter ``name``, the call) for every call of ``fn`` in the file; unknown when some
        use of ``fn`` is not a plain call, or another file of the tree imports it (a caller this file cannot see)."""
        calls = self.names.calls_of(fn)
        if calls is None or self.ctx.project is not None and self.ctx.project.imported_elsewhere(self.ctx, fn.name):
            raise _Unknown
        found: list[Source] = []
        for call in calls:
            argument = argument_for(call, fn, name)
            if argument is None:
                raise _Unknown
            found.append((argument, call))
        return found

    # -- dict items ------------------------------------------------------------
    def _item(self, container: ast.expr, key: object, read: ast.AST, depth: int) -> Iterator[object]:
        """The values of ``container[key]`` at ``read``: a dict literal's item, through names and call sites."""
        if isinstance(container, ast.Dict):
            yield from self._literal_item(container, key, depth)
            return
        scope = self.names.scope(container) if isinstance(container, ast.Name) else None
        if scope is None or depth > MAX_DEPTH:
            raise _Unknown
        if self.names.local(scope, container.id):  # type: ignore[attr-defined]
            self._unchanged(scope, container, key, read)  # type: ignore[arg-type]
        else:
            self._unchanged_global(container.id, key)  # type: ignore[attr-defined]
        for value, call in self._sources(container, depth):  # type: ignore[arg-type]
            if call is None:  # assigned: a dict literal only (an alias could be changed through its other name)
                if not isinstance(value, ast.Dict):
                    raise _Unknown
                yield from self._literal_item(value, key, depth + 1)
                continue
            caller = self.names.scope(call)
            if caller is None or self.names.loops(call, caller):
                raise _Unknown  # a call in a loop: the call before may have changed the dict
            yield from self._item(value, key, call, depth + 1)  # type: ignore[arg-type]

    def _literal_item(self, literal: ast.Dict, key: object, depth: int) -> Iterator[object]:
        if any(k is None or not isinstance(k, ast.Constant) for k in literal.keys):
            raise _Unknown  # `{**base, ...}` or a computed key
        matches = [v for k, v in zip(literal.keys, literal.values) if k.value == key]  # type: ignore[union-attr]
        if not matches:
            raise _Unknown
        yield from self.values(matches[-1], depth)  # the last of equal keys wins

    def _unchanged(self, scope: ast.AST, name: ast.Name, key: object, read: ast.AST) -> None:
        """Unknown unless nothing in ``scope`` may change ``name[key]`` before ``read`` (the read's whole expression:
        a call's arguments run before it): every other use that may run first reads an item or sets another constant
        key (no method call, no alias, not passed on), and no nested function or lambda sees the name."""
        own = [n for n in self.ctx.members(scope) if isinstance(n, ast.Name) and n.id == name.id]
        if len(own) != sum(isinstance(n, ast.Name) and n.id == name.id for n in walk(scope)):
            raise _Unknown
        for use in own:
            if use is not name and isinstance(use.ctx, ast.Load) and self.names.may_precede(use, read, scope, overlap=True):
                self._item_use(use, key)

    def _unchanged_global(self, name: str, key: object) -> None:
        """Unknown unless no code of the file, and no other file of the tree, may change the module's dict ``name``."""
        for use in self.ctx.nodes:
            if isinstance(use, ast.Name) and use.id == name and isinstance(use.ctx, ast.Load):
                self._item_use(use, key)
        if self.ctx.project is not None and self.ctx.project.imported_elsewhere(self.ctx, name):
            raise _Unknown

    def _item_use(self, use: ast.Name, key: object) -> None:
        """Unknown unless ``use`` reads an item, or sets a constant key other than ``key``."""
        parent = self.names.parent.get(id(use))
        if not isinstance(parent, ast.Subscript) or parent.value is not use:
            raise _Unknown
        if not isinstance(parent.ctx, ast.Load) and (not isinstance(parent.slice, ast.Constant) or parent.slice.value == key):
            raise _Unknown
