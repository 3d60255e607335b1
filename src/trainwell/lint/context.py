"""What one source file says about its names: imports, aliases and roles.

A *key* is the dotted text of a name or attribute chain (``opt``,
``self.opt``, ``model.backbone``). A *role* says what a key holds (model,
optimizer, scheduler, scaler, loss, loader), learnt from the constructor it was
assigned from, resolved through the file's imports. Keys are file-wide, not
scoped: two functions that both say ``model`` mean the same thing, which is how
people write training code. Where a role is not known, rules stay silent.
"""

from __future__ import annotations

import ast
import re
from functools import cached_property
from typing import Any

from trainwell.lint.roles import Role, RoleIndex  # noqa: F401  (Role is part of this module's API)
from trainwell.lint.syntax import children, has_star_kwargs, key_of, kwarg, method_name, strip_identity, walk  # noqa: F401
from trainwell.diagnostic import Finding, Fix

_PHYSICAL_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")  # ast's line breaks (not \f or \v)

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_SCOPE_CLASSES = frozenset(_SCOPES)  # exact classes: ast never subclasses them
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}  # a node class's fields that can hold child nodes (ctx markers left out)
_UNSEEN = object()
_DECLARATIONS = (ast.Import, ast.ImportFrom, ast.ClassDef)
_BLOCK_HOLDERS = tuple(getattr(ast, name) for name in (  # every node class with a list of statements (TryStar: 3.11+)
    "FunctionDef", "AsyncFunctionDef", "ClassDef", "For", "AsyncFor", "While", "If", "With", "AsyncWith", "Try", "TryStar",
    "ExceptHandler", "match_case") if hasattr(ast, name))


def _child_fields(kind: type) -> tuple[str, ...]:
    """The fields of a node class the indexing walk follows, named once per class."""
    found = _CHILD_FIELDS[kind] = tuple(name for name in kind._fields if name != "ctx")  # type: ignore[attr-defined]
    return found


class FileContext(RoleIndex):
    """One parsed file: its text, tree, imports, local classes and roles."""

    def __init__(self, path: str, source: str, tree: ast.Module, target_version: tuple[int, int] = (2, 4)) -> None:
        self.path = path
        self.source = source
        self.lines = source.splitlines()
        self.tree = tree
        self.target_version = target_version
        self.imports: dict[str, str] = {}
        self.classes: dict[str, ast.ClassDef] = {}
        self.functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        # Functions defined inside other functions: visible to data flow (what a
        # call returns), never entry points of their own.
        self.nested_functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        self.methods: dict[str, dict[str, ast.FunctionDef | ast.AsyncFunctionDef]] = {}
        self.project: Any = None  # the ProjectIndex of the checked tree (lint/index.py), or None: this file alone
        self.relative_imports: dict[str, tuple[int, str, str]] = {}  # name -> (level, module, attribute)
        self._qualnames: dict[ast.AST | None, str | None] = {}  # node -> qualname(node); holds the node, so its id stays its own
        self._index()

    # -- imports and names -------------------------------------------------
    def _index(self) -> None:
        self.nodes: list[ast.AST] = []
        self.scope_members: dict[int, list[ast.AST]] = {}  # id(function or module) -> its own nodes
        members = self.scope_members.setdefault(id(self.tree), [])
        self._parent_of: dict[int, ast.AST] = {id(child): self.tree for child in self.tree.body}  # what :attr:`parents` answers
        stack: list[tuple[ast.AST, list[ast.AST]]] = [(child, members) for child in self.tree.body]
        nodes_append, AST, pop, push, Name, Constant = self.nodes.append, ast.AST, stack.pop, stack.append, ast.Name, ast.Constant
        parent_of = self._parent_of
        while stack:  # a hand-rolled walk: ast.walk is the checker's hottest loop on big trees
            node, owner = pop()
            nodes_append(node)
            owner.append(node)
            kind = node.__class__
            if kind is Name or kind is Constant:
                continue  # a leaf (an identifier and its ctx, a constant): about half the nodes
            inner = self.scope_members.setdefault(id(node), []) if kind in _SCOPE_CLASSES else owner
            fields = _CHILD_FIELDS.get(kind)
            for name in fields if fields is not None else _child_fields(kind):
                value = getattr(node, name, None)
                if value.__class__ is list:
                    for item in value:
                        if isinstance(item, AST):
                            push((item, inner))
                            parent_of[id(item)] = node
                elif isinstance(value, AST):
                    push((value, inner))
                    parent_of[id(value)] = node
        for node in self.nodes:
            if not isinstance(node, _DECLARATIONS):
                continue  # one test for the many nodes that are none of the four cases below
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.imports[alias.asname] = alias.name
                    else:
                        head = alias.name.split(".")[0]
                        self.imports[head] = head
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    self.imports[alias.asname or alias.name] = f"{node.module}.{alias.name}"
            elif isinstance(node, ast.ImportFrom) and node.level:
                for alias in node.names:
                    self.relative_imports[alias.asname or alias.name] = (node.level, node.module or "", alias.name)
            elif isinstance(node, ast.ClassDef):
                self.classes.setdefault(node.name, node)
                self.methods.setdefault(node.name, {})
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        self.methods[node.name].setdefault(item.name, item)
        for node in self.tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions[node.name] = node
            elif isinstance(node, ast.If):  # functions defined under `if __name__ == ...` or version checks
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        self.functions.setdefault(item.name, item)
        top_level = {id(f) for f in self.functions.values()}
        for node in self.nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and id(node) not in top_level:
                self.nested_functions.setdefault(node.name, node)

    def home(self, node: ast.AST | None) -> FileContext:
        """The file ``node`` was written in: this one, or another file of the project whose helper is being walked."""
        if self.project is None or node is None:
            return self
        return self.project.owner(node) or self

    def members(self, scope: ast.AST) -> list[ast.AST]:
        """The nodes of a function's (or module's) own body, in whichever file of the project it is."""
        found = self.scope_members.get(id(scope))
        if found is None and self.project is not None:
            home = self.project.owner(scope)
            found = home.scope_members.get(id(scope)) if home is not None else None
        return found or []

    def qualname(self, node: ast.AST | None) -> str | None:
        """``torch.nn.CrossEntropyLoss`` for ``nn.CrossEntropyLoss`` after ``from torch import nn``."""
        found = self._qualnames.get(node, _UNSEEN)  # every rule asks again for the same callees: resolved once per node
        if found is _UNSEEN:
            found = self._qualnames[node] = self._qualname(node)
        return found

    def _qualname(self, node: ast.AST | None) -> str | None:
        home = self.home(node)
        if home is not self:
            return home.qualname(node)
        key = key_of(node)
        if key is None:
            return None
        head, _, rest = key.partition(".")
        if head in self.imports:
            full = self.imports[head]
            return f"{full}.{rest}" if rest else full
        return None

    def call_name(self, call: ast.AST) -> str | None:
        """The resolved name of a call's callee, or None."""
        return self.qualname(call.func) if isinstance(call, ast.Call) else None

    def nodes_of(self, *kinds: type[ast.AST]) -> list[ast.AST]:
        """The file's nodes of these concrete classes (``ast.Call``, never ``ast.expr``), in ``nodes`` order: one pass
        sorts every node by class, then each question is a lookup instead of a scan of the whole file."""
        return _of_classes(self.__dict__.setdefault("_nodes_by_class", {}), self.nodes, kinds)

    def members_of(self, scope: ast.AST, *kinds: type[ast.AST]) -> list[ast.AST]:
        """:meth:`members` of ``scope`` of these concrete classes, in order (sorted by class once per scope)."""
        home = self.home(scope)
        index = home.__dict__.setdefault("_members_by_class", {}).setdefault(id(scope), {})
        return _of_classes(index, home.members(scope), kinds)

    @cached_property
    def calls(self) -> list[ast.Call]:
        return self.nodes_of(ast.Call)  # type: ignore[return-value]

    @cached_property
    def assigns(self) -> list[ast.Assign]:
        return self.nodes_of(ast.Assign)  # type: ignore[return-value]

    def parameter_owners(self, source: ast.AST) -> list[str | None]:
        """``key_of(M)`` for each ``M.parameters()`` / ``M.named_parameters()`` in ``source``, in ``ast.walk`` order; cached per
        node (an assignment is read once per optimizer that names its target)."""
        cache = self.__dict__.setdefault("_parameter_owners_of", {})  # keyed by the node itself: it stays alive, its id its own
        found = cache.get(source)
        if found is None:
            found = cache[source] = [key_of(strip_identity(sub.func.value)) for sub in walk(source)  # type: ignore[attr-defined]
                                         if method_name(sub) in ("parameters", "named_parameters")]
        return found

    def assignments_to(self, keys: set[str]) -> list[ast.Assign]:
        """The assignments with a target whose key is in ``keys``, in file order (one index per file, not a scan per call)."""
        index = self.__dict__.get("_assigns_by_key")
        if index is None:
            index = self.__dict__["_assigns_by_key"] = {}
            for position, assign in enumerate(self.assigns):
                for target in assign.targets:
                    index.setdefault(key_of(target), []).append(position)
        assigns = self.assigns
        return [assigns[p] for p in sorted({p for key in keys for p in index.get(key, ())})]

    @cached_property
    def uses_torch(self) -> bool:
        return any(v.split(".")[0] in ("torch", "lightning", "pytorch_lightning", "accelerate", "transformers", "torchvision") for v in self.imports.values())

    # -- local classes -----------------------------------------------------
    def is_module_class(self, name: str, _seen: frozenset[str] = frozenset()) -> bool:
        """Whether the local class ``name`` derives (through local classes) from ``torch.nn.Module``."""
        cls = self.classes.get(name)
        if cls is None or name in _seen:
            return False
        for base in cls.bases:
            qual = self.qualname(base)
            if qual in ("torch.nn.Module", "torch.nn.modules.module.Module", "lightning.LightningModule",
                        "pytorch_lightning.LightningModule", "lightning.pytorch.LightningModule"):
                return True
            if qual and qual.startswith("torch.nn.") and qual.split(".")[-1][:1].isupper():
                return True
            base_key = key_of(base)
            if base_key in self.classes and self.is_module_class(base_key, _seen | {name}):
                return True
        return False

    def derives_from(self, name: str, suffix: str, _seen: frozenset[str] = frozenset()) -> bool:
        """Whether local class ``name`` derives from a class whose resolved name ends with ``suffix``."""
        cls = self.classes.get(name)
        if cls is None or name in _seen:
            return False
        for base in cls.bases:
            qual = self.qualname(base) or key_of(base) or ""
            if qual.endswith(suffix) or (key_of(base) in self.classes and self.derives_from(key_of(base), suffix, _seen | {name})):
                return True
        return False

    # -- unit tests ----------------------------------------------------------
    @cached_property
    def test_functions(self) -> frozenset[int]:
        """ids of the functions that are unit tests, as pytest and unittest collect them: ``test*`` functions of a test
        module (``test_*.py``, ``*_test.py``), and ``test*`` methods of a class deriving from ``unittest.TestCase`` (or
        named ``Test*`` in a test module)."""
        name = re.split(r"[\\/]", self.path)[-1]
        module = name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))
        found = {id(f) for f in self.functions.values() if module and f.name.startswith("test")}
        for cls, methods in self.methods.items():
            if self.derives_from(cls, "TestCase") or (module and cls.startswith("Test")):
                found |= {id(m) for m in methods.values() if m.name.startswith("test")}
        return frozenset(found)

    def is_test_function(self, fn: ast.AST | None) -> bool:
        """Whether ``fn`` (a function of this file or of another file of the project) is a unit test."""
        home = self.home(fn)
        return fn is not None and id(fn) in home.test_functions

    # -- findings ------------------------------------------------------------
    def finding(self, code: str, node: ast.AST, message: str, hint: str, fix: Fix | None = None, preview: bool = False) -> Finding:
        """A finding at ``node`` (1-based columns), in the file that holds it; ``preview`` when not every premise is proven."""
        home = self.home(node)
        if home is not self:
            return home.finding(code, node, message, hint, fix, preview)
        line, end_line = node.lineno, getattr(node, "end_lineno", None) or node.lineno  # type: ignore[attr-defined]
        end_col = getattr(node, "end_col_offset", None)
        return Finding(
            code=code, message=message, path=self.path,
            line=line, column=self.char_col(line, node.col_offset) + 1,  # type: ignore[attr-defined]
            end_line=end_line, end_column=self.char_col(end_line, end_col) + 1 if end_col is not None else None,
            fix=fix, hint=hint, preview=preview,
        )

    def char_col(self, line: int, byte_col: int) -> int:
        """ast columns count UTF-8 bytes; people (and editors) count characters."""
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        if text.isascii():
            return byte_col
        return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))

    @cached_property
    def blocks(self) -> dict[int, tuple[list[ast.stmt], int]]:
        """id(statement) -> (the statement list holding it, its index there)."""
        found: dict[int, tuple[list[ast.stmt], int]] = {}
        for kind in _BLOCK_HOLDERS:  # the classes with a statement list (the module's own is not one of the nodes)
            for node in self.nodes_of(kind):
                for name in ("body", "orelse", "finalbody"):
                    body = getattr(node, name, None)
                    if isinstance(body, list):
                        for index, stmt in enumerate(body):
                            if isinstance(stmt, ast.stmt):
                                found[id(stmt)] = (body, index)
        return found

    @property
    def parents(self) -> dict[int, ast.AST]:
        """id(node) -> the node it is a child of, for every node of this file (a top-level statement's: the module);
        recorded by the one walk that indexes the file, for the rules that climb from a node to what holds it."""
        return self._parent_of

    def stored_names(self, stmt: ast.stmt) -> list[ast.Name]:
        """The names a simple statement of this file stores to (its targets, a walrus's, a comprehension's), in
        ``nodes`` order: one pass over the file's stored names, instead of a walk of each statement asked about."""
        by_statement = self.__dict__.get("_stored_by_statement")
        if by_statement is None:
            by_statement = self.__dict__["_stored_by_statement"] = {}
            parent_of, Store, stmt_class = self._parent_of, ast.Store, ast.stmt
            for name in self.nodes_of(ast.Name):
                if name.ctx.__class__ is Store:  # type: ignore[attr-defined]
                    node = parent_of.get(id(name))
                    while node is not None and not isinstance(node, stmt_class):
                        node = parent_of.get(id(node))
                    if node is not None:
                        by_statement.setdefault(id(node), []).append(name)
        return by_statement.get(id(stmt), [])

    def loads(self, scope: ast.AST, name: str) -> list[ast.Name]:
        """The Name nodes of ``scope``'s own body that read ``name``, in the order of :meth:`members`; one index per scope
        instead of a scan of the scope per name asked."""
        index = self.__dict__.setdefault("_loads", {}).get(scope)
        if index is None:
            index = self.__dict__["_loads"][scope] = {}
            for node in self.members(scope):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                    index.setdefault(node.id, []).append(node)
        return list(index.get(name, ()))  # a copy: the caller may keep or change it

    def encloses(self, outer: ast.AST, node: ast.AST) -> bool:
        """Whether ``node`` is ``outer`` or inside it, in whichever file of the project they are: ``any(n is node for n in
        walk(outer))``, climbing from ``node`` instead of walking all of ``outer``."""
        parents = self.home(node).parents
        while node is not None:
            if node is outer:
                return True
            node = parents.get(id(node))  # type: ignore[assignment]
        return False

    def scope_of(self, node: ast.AST) -> ast.AST:
        """The function (or the module) whose own body holds ``node``, in whichever file of the project it is."""
        home = self.home(node)
        parent = home.parents.get(id(node))
        while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
            parent = home.parents.get(id(parent))
        return parent if parent is not None else home.tree

    def statement_of(self, call: ast.AST) -> ast.stmt | None:
        """The statement that is exactly ``call`` (``opt.step()`` on its own line), or None."""
        if isinstance(call, ast.stmt):
            return call
        stmt = self._parent_of.get(id(call))  # a node of this file only, in a block of :attr:`blocks` (not the module's)
        if isinstance(stmt, ast.Expr) and stmt.value is call and self._parent_of.get(id(stmt)) is not self.tree:
            return stmt
        return None

    def snippet(self, node: ast.AST, limit: int = 60) -> str:
        """A one-line quote of ``node`` for messages."""
        text = " ".join(self.text(node).split())
        return text if len(text) <= limit else text[: limit - 1] + "…"

    def text(self, node: ast.AST) -> str:
        """The source text of ``node`` as the user wrote it (unparsed when that fails)."""
        return self.home(node).segment(node) or ast.unparse(node)

    @cached_property
    def _physical_lines(self) -> list[str]:
        """The lines as ``ast`` counts them (ends kept), split once: ``ast.get_source_segment`` splits the whole file per call."""
        return _PHYSICAL_LINE.findall(self.source)

    def segment(self, node: ast.AST) -> str | None:
        """``ast.get_source_segment(self.source, node)``, on the lines split once."""
        end_line, end_col = getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None)
        if end_line is None or end_col is None or not hasattr(node, "lineno"):
            return None
        lines, first, last = self._physical_lines, node.lineno - 1, end_line - 1  # type: ignore[attr-defined]
        if not 0 <= first <= last < len(lines):
            return None
        if first == last:
            return lines[first].encode()[node.col_offset:end_col].decode()  # type: ignore[attr-defined]
        head = lines[first].encode()[node.col_offset:].decode()  # type: ignore[attr-defined]
        return head + "".join(lines[first + 1:last]) + lines[last].encode()[:end_col].decode()


def _of_classes(index: dict, nodes: list[ast.AST], kinds: tuple[type[ast.AST], ...]) -> list[ast.AST]:
    """The items of ``nodes`` whose class is one of ``kinds``, in order. ``index`` keeps each class's positions
    (filled on the first question) and each answer given."""
    if not index:
        index[None] = []  # filled, even for no nodes
        for position, node in enumerate(nodes):
            found = index.get(node.__class__)
            if found is None:
                index[node.__class__] = [position]
            else:
                found.append(position)
    answer = index.get(kinds)
    if answer is None:
        if len(kinds) == 1:
            answer = [nodes[p] for p in index.get(kinds[0], ())]
        else:
            answer = [nodes[p] for p in sorted(p for kind in kinds for p in index.get(kind, ()))]
        index[kinds] = answer
    return answer
