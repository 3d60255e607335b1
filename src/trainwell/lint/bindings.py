"""Where the names of one file are bound, and which bindings may run before a read.

Python's own scoping, read from the tree: the function (or module) whose body
holds a node; the plain assignments to a name there and whether anything else
binds it (a loop target, ``+=``, an import, ``global``); a function's
parameters and every call of it in the file; whether one node may run before
another in one call of a function (written above it, or in a loop around
both: control only flows down otherwise). Built once per file, on the first
question; :mod:`trainwell.lint.constants` reads it.
"""

from __future__ import annotations

import ast

from trainwell.lint.context import FileContext

Function = ast.FunctionDef | ast.AsyncFunctionDef
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_OWN_SCOPES = (ast.ClassDef, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def bindings(ctx: FileContext) -> Bindings:
    """The file's bindings, built on the first question and kept with the file."""
    found = ctx.__dict__.get("_bindings")
    if found is None:
        found = ctx.__dict__["_bindings"] = Bindings(ctx)
    return found


def start(node: ast.AST) -> tuple[int, int]:
    return node.lineno, node.col_offset  # type: ignore[attr-defined]


def end(node: ast.AST) -> tuple[int, int]:
    return node.end_lineno or node.lineno, node.end_col_offset or 0  # type: ignore[attr-defined]


class Bindings:
    """Scopes, assignments, parameters and call sites of one file."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.parent = ctx.parents  # the file's one parents map (FileContext builds it once)
        self._assignments: dict[tuple[int, str], tuple[list[ast.AST], bool]] = {}
        self._calls: dict[str, list[ast.Call] | None] = {}
        self._declared = {n for node in ctx.nodes if isinstance(node, (ast.Global, ast.Nonlocal)) for n in node.names}

    def scope(self, node: ast.AST) -> ast.AST | None:
        """The function (or the module) whose own body holds ``node``; None inside a class body, a lambda or a
        comprehension, and for a node that is not in this file's tree."""
        child, parent = node, self.parent.get(id(node))
        while parent is not None:
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(child is s for s in parent.body):
                return parent
            if isinstance(parent, _OWN_SCOPES):
                return None
            child, parent = parent, self.parent.get(id(parent))
        return child if child is self.ctx.tree else None

    def assignments(self, scope: ast.AST, name: str) -> tuple[list[ast.AST], bool]:
        """The plain assignments to ``name`` in ``scope``'s own body (``name = v``, ``name: T = v``, ``(name := v)``:
        each has ``.value``), and whether anything else binds it there (a loop target, ``+=``, an import, ...)."""
        key = (id(scope), name)
        if key not in self._assignments:
            self._assignments[key] = self._find_assignments(scope, name)
        return self._assignments[key]

    def _find_assignments(self, scope: ast.AST, name: str) -> tuple[list[ast.AST], bool]:
        plain: list[ast.AST] = []
        other = False
        for node in self.ctx.members(scope):
            if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
                parent = self.parent.get(id(node))
                if isinstance(parent, ast.Assign) and any(node is t for t in parent.targets) \
                        or isinstance(parent, ast.AnnAssign) and parent.value is not None or isinstance(parent, ast.NamedExpr):
                    plain.append(parent)
                elif not self._comprehension_target(node):
                    other = True
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name \
                    or isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                        a.name == "*" or (a.asname or a.name.split(".")[0]) == name for a in node.names) \
                    or isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name == name \
                    or isinstance(node, ast.MatchMapping) and node.rest == name \
                    or isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
                other = True
        return plain, other

    def _comprehension_target(self, node: ast.AST) -> bool:
        """A comprehension's own variable (its scope is the comprehension's)."""
        child, parent = node, self.parent.get(id(node))
        while parent is not None and not isinstance(parent, ast.stmt):
            if isinstance(parent, ast.comprehension):
                return child is parent.target
            child, parent = parent, self.parent.get(id(parent))
        return False

    def local(self, scope: ast.AST, name: str) -> bool:
        """Whether ``name`` is a local of the function ``scope`` (assigned or bound there, or a parameter)."""
        plain, other = self.assignments(scope, name)
        return scope is not self.ctx.tree and (bool(plain) or other or name in parameters(scope))  # type: ignore[arg-type]

    def declared_global(self, name: str) -> bool:
        """Whether some function of the file declares ``global name`` (or ``nonlocal``)."""
        return name in self._declared

    def loops(self, node: ast.AST, scope: ast.AST) -> set[int]:
        """The loops of ``scope`` around ``node``."""
        found: set[int] = set()
        parent = self.parent.get(id(node))
        while parent is not None and parent is not scope:
            if isinstance(parent, _LOOPS):
                found.add(id(parent))
            parent = self.parent.get(id(parent))
        return found

    def may_precede(self, earlier: ast.AST, later: ast.AST, scope: ast.AST, overlap: bool = False) -> bool:
        """Whether ``earlier`` may run before ``later`` in one call of ``scope``: it ends above where ``later``
        starts (``overlap``: starts before ``later`` ends, as an argument runs before its call), or a loop holds both."""
        above = start(earlier) < end(later) if overlap else end(earlier) <= start(later)
        return above or bool(self.loops(earlier, scope) & self.loops(later, scope))

    def calls_of(self, fn: Function) -> list[ast.Call] | None:
        """Every call of the top-level function ``fn`` in the file; None when it is decorated, used in any other way
        (passed as a value, an attribute of that name, rebound) or never called here."""
        name = fn.name
        if self.ctx.functions.get(name) is not fn or fn.decorator_list or self.scope(fn) is not self.ctx.tree:
            return None
        if name not in self._calls:
            self._calls[name] = self._find_calls(fn)
        return self._calls[name]

    def _find_calls(self, fn: Function) -> list[ast.Call] | None:
        calls: list[ast.Call] = []
        for node in self.ctx.nodes:
            if isinstance(node, ast.Name) and node.id == fn.name:
                parent = self.parent.get(id(node))
                if not isinstance(node.ctx, ast.Load) or not isinstance(parent, ast.Call) or parent.func is not node:
                    return None
                calls.append(parent)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == fn.name and node is not fn \
                    or isinstance(node, ast.Attribute) and node.attr == fn.name or isinstance(node, ast.arg) and node.arg == fn.name \
                    or isinstance(node, (ast.Import, ast.ImportFrom)) and any((a.asname or a.name.split(".")[0]) == fn.name for a in node.names):
                return None
        return calls or None


def parameters(fn: Function) -> dict[str, ast.arg | None]:
    """name -> its ``ast.arg``; None for ``*args`` and ``**kwargs``."""
    a = fn.args
    found: dict[str, ast.arg | None] = {p.arg: p for p in [*a.posonlyargs, *a.args, *a.kwonlyargs]}
    found.update({p.arg: None for p in (a.vararg, a.kwarg) if p is not None})
    return found
