"""Which files of the checked tree one file's result may depend on, found without parsing anything.

The cache key of a file must change when any file its analysis read changes.
The project index reaches other files only through imports, so the files a
file imports, directly or through others, bound what it reads; and the files
that import it directly, which the constant evaluation reads to see whether a
caller it cannot see calls its functions (``ProjectIndex.imported_elsewhere``). A cached run
must not parse (that is the time it saves), so imports are found by a scan of
the text: every ``import`` / ``from ... import`` anywhere in it (comments and
strings too), each matched to every file of the tree whose module path ends
with the imported name, its packages and the names it imports. Both steps
over-approximate: at worst a file is checked again for nothing, never
answered from a stale entry.
"""

from __future__ import annotations

import hashlib
import os
import re
from typing import Iterable, Mapping

from trainwell.lint import notebook

_FROM = re.compile(r"\bfrom\s+(\.*)\s*([\w.]*)\s+import\s*(\([^)]*\)|[^\n;]*)")
_IMPORT = re.compile(r"\bimport\s+([\w.]+(?:\s+as\s+\w+)?(?:\s*,\s*[\w.]+(?:\s+as\s+\w+)?)*)")


class Dependencies:
    """The tree's files, scanned once: their contents' digests and the files each may import.

    Files are named by absolute path (``os.path.abspath``: string work only,
    which keeps a cached run fast).
    """

    def __init__(self, files: Iterable[str | os.PathLike[str]], texts: Mapping[str, str] | None = None) -> None:
        """``texts``: sources to read for some files (absolute paths) instead of the disk (an editor's unsaved buffer)."""
        self._content: dict[str, bytes] = {}
        self._text: dict[str, str] = {}
        self._by_suffix: dict[tuple[str, ...], list[str]] = {}
        texts = texts or {}
        for name in {os.path.abspath(f) for f in files}:
            try:
                if name in texts:
                    data = texts[name].encode()
                else:
                    with open(name, "rb") as handle:
                        data = handle.read()
            except OSError:
                continue
            self._content[name] = hashlib.sha256(data).digest()
            self._text[name] = notebook.program_of(data.decode("utf-8", errors="replace"), name)  # a notebook's imports are in its cells
            parts = tuple(name.split(os.sep))
            parts = parts[:-1] if parts[-1] == "__init__.py" else parts[:-1] + (parts[-1].removesuffix(".py"),)
            for length in range(1, len(parts) + 1):
                self._by_suffix.setdefault(parts[-length:], []).append(name)
        self._edges: dict[str, set[str]] = {}
        self._importers: dict[str, set[str]] | None = None
        self._digests: dict[str, str] = {}
        self._parsed: dict[str, tuple[frozenset[tuple[str, ...]], frozenset[int]]] = {}  # statement -> what it names

    def digest(self, path: str | os.PathLike[str]) -> str:
        """A digest of ``path``, every file of the tree it may import, directly or through others, and the files that
        may import it directly (the constant evaluation asks whether they call its functions) ("" outside the tree)."""
        if not self._digests:
            self._digest_components()
        name = os.path.abspath(path)
        found = self._digests.get(name, "")
        importers = sorted(self.importers(name))
        if not found or not importers:
            return found
        digest = hashlib.sha256(found.encode())
        for importer in importers:
            digest.update(b"\0" + importer.encode() + b"\0" + self._content[importer])
        return digest.hexdigest()

    def imports(self, path: str | os.PathLike[str]) -> set[str]:
        """The files of the tree (absolute paths) that ``path`` may import directly."""
        return set(self._imports(os.path.abspath(path)))

    def importers(self, path: str | os.PathLike[str]) -> set[str]:
        """The files of the tree (absolute paths) that may import ``path`` directly (the whole tree is scanned once)."""
        if self._importers is None:
            self._importers = {}
            for name in self._text:
                for imported in self._imports(name):
                    self._importers.setdefault(imported, set()).add(name)
        return set(self._importers.get(os.path.abspath(path), ()))

    def text(self, path: str | os.PathLike[str]) -> str:
        """The text the scan read for a file of the tree (a notebook's program), "" outside it."""
        return self._text.get(os.path.abspath(path), "")

    def _digest_components(self) -> None:
        """Tarjan's strongly connected components, which come out dependencies first: each component's
        digest covers its files' contents and the digests of the components it imports (a Merkle tree)."""
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        stack: list[str] = []
        on_stack: set[str] = set()
        for root in sorted(self._text):
            if root in index:
                continue
            index[root] = low[root] = len(index)
            stack.append(root)
            on_stack.add(root)
            work = [(root, iter(sorted(self._imports(root))))]
            while work:
                node, children = work[-1]
                for child in children:
                    if child not in index:
                        index[child] = low[child] = len(index)
                        stack.append(child)
                        on_stack.add(child)
                        work.append((child, iter(sorted(self._imports(child)))))
                        break
                    if child in on_stack:
                        low[node] = min(low[node], index[child])
                else:
                    work.pop()
                    if work:
                        low[work[-1][0]] = min(low[work[-1][0]], low[node])
                    if low[node] == index[node]:
                        self._close_component(node, stack, on_stack)

    def _close_component(self, head: str, stack: list[str], on_stack: set[str]) -> None:
        members: list[str] = []
        while not members or members[-1] != head:
            members.append(stack.pop())
            on_stack.discard(members[-1])
        inside = set(members)
        below = sorted({self._digests[g] for m in members for g in self._imports(m) if g not in inside})
        digest = hashlib.sha256()
        for member in sorted(members):
            digest.update(member.encode() + b"\0" + self._content[member])
        digest.update("".join(below).encode())
        for member in members:
            self._digests[member] = digest.hexdigest()

    def _imports(self, name: str) -> set[str]:
        if name not in self._edges:
            found: set[str] = set()
            for module in self._modules(name, self._text.get(name, "")):
                found.update(self._by_suffix.get(module, ()))
            found.discard(name)
            self._edges[name] = found
        return self._edges[name]

    def _modules(self, name: str, text: str) -> set[tuple[str, ...]]:
        """Every dotted name an import statement in ``text`` may resolve to, its packages included."""
        names: set[tuple[str, ...]] = set()
        for statement in _statements(text):
            if statement not in self._parsed:
                self._parsed[statement] = _statement_modules(statement)
            modules, levels = self._parsed[statement]
            names |= modules
            folders = name.split(os.sep)[:-1]
            for level in levels:  # `from . import x`: the package's own __init__.py
                names.add(tuple(folders[: max(len(folders) - level + 1, 1)]))
        return names


def _statement_modules(statement: str) -> tuple[frozenset[tuple[str, ...]], frozenset[int]]:
    """The dotted names (and their packages) one import statement may name, and the levels of its ``from . import``."""
    names: set[tuple[str, ...]] = set()
    levels: set[int] = set()

    def add(dotted: str) -> None:
        parts = tuple(p for p in dotted.split(".") if p)
        names.update(parts[:length] for length in range(1, len(parts) + 1))

    for dots, module, imported in _FROM.findall(statement):
        add(module)
        for item in imported.strip("()").replace("\\", " ").split(","):
            item = item.split(" as ")[0].strip()
            if item and item != "*":
                add(f"{module}.{item}" if module else item)
        if dots and not module:
            levels.add(len(dots))
    for group in _IMPORT.findall(statement):
        for item in group.split(","):
            add(item.split(" as ")[0].strip())
    return frozenset(names), frozenset(levels)


def _statements(text: str) -> Iterable[str]:
    """The lines that hold the word ``import``, a parenthesised name list through its closing parenthesis."""
    position = text.find("import")
    while position != -1:
        start = text.rfind("\n", 0, position) + 1
        end = text.find("\n", position)
        end = len(text) if end == -1 else end
        opening = text.find("(", position, end)
        if opening != -1:
            closing = text.find(")", opening)
            end = len(text) if closing == -1 else max(end, closing + 1)
        yield text[start:end]
        position = text.find("import", end)
