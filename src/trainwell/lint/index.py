"""The project: the files of the checked tree, and imports resolved inside it.

A training script usually calls helpers from its own project
(``from engine import train_one_epoch``). The index finds the file an import
names the way Python would from the importing file (its folder, then each
folder above it, up to the checked root; relative imports from the package),
parses it once, and hands its functions to the loop model, which walks them as
if they were local. Whatever resolves outside the tree (installed libraries,
missing files) stays unknown, and unknown silences a rule.
"""

from __future__ import annotations

import ast
import re
import warnings
from collections import OrderedDict
from pathlib import Path
from typing import Iterable, Mapping

from trainwell.lint.context import FileContext
from trainwell.lint.dependencies import Dependencies
from trainwell.lint.discover import SKIP_DIRS
from trainwell.lint.facts import CheckedFile
from trainwell.lint.syntax import key_of, walk

Function = ast.FunctionDef | ast.AsyncFunctionDef
_NOT_SOURCES = SKIP_DIRS | {"dist-packages", "__pycache__"}
MAX_MODULE_BYTES = 2_000_000  # a generated file this large holds no helper worth inlining
RECENT = 32  # checked files whose parse is kept for a later file that imports one of them


class ProjectIndex:
    """The checked tree's Python files, parsed on demand, and the owner of every node parsed through it."""

    def __init__(self, files: Iterable[Path], roots: Iterable[Path], target_version: tuple[int, int],
                 texts: Mapping[Path, str] | None = None) -> None:
        """``texts``: sources to read for some files instead of the disk (an editor's unsaved buffer, a mutated copy)."""
        self._files = {p.resolve(): p for p in files}
        self._roots = [r.resolve() for r in roots]
        self._target = target_version
        self._contexts: dict[Path, FileContext | None] = {}
        self._recent: OrderedDict[Path, FileContext] = OrderedDict()  # checked files, the last RECENT (see keep)
        self._owner: dict[int, FileContext] = {}
        self._modules: dict[tuple[Path, str, int], Path | None] = {}
        self._texts: dict[Path, str] = {p.resolve(): text for p, text in (texts or {}).items()}
        self._disk: dict[Path, bool] = {}
        self._real: dict[Path, Path] = {}  # path -> path.resolve(): a system call per component, asked per import
        self._folders: dict[Path, Path] = {}  # importer -> its resolved folder
        self._besides: dict[tuple[Path, str], bool] = {}
        self._dependencies: Dependencies | None = None  # the tree's import edges, scanned on the first question
        self._under: dict[Path, Path | None] = {}  # folder -> the first root it is or lies under
        # names a module of the tree can start with: an import whose first part is none of them (torch, numpy)
        # is outside the tree, known without a look at the disk
        self._heads = {p.stem for p in self._files} | {part for p in self._files for part in p.parent.parts}

    # -- files ---------------------------------------------------------------
    def context(self, path: Path) -> FileContext | None:
        """The parsed file at ``path`` (inside the tree), or None when it cannot be read or parsed. Kept for the run:
        only files whose functions other files call are parsed here, which keeps the heap (and the GC) small."""
        path = self._resolve(path)
        if path in self._contexts:
            return self._contexts[path]
        ctx = None
        kept = self._recent.pop(path, None)
        try:
            if path.stat().st_size > MAX_MODULE_BYTES:
                raise ValueError("too large")
            source = self._text(path)
            if kept is not None and kept.source == source:
                ctx = kept  # checked a moment ago: that parse is this one
            else:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    tree = ast.parse(source)
                ctx = CheckedFile(str(self._files.get(path, path)), source, tree, self._target)
            ctx.project = self
            self._owner[id(ctx.tree)] = ctx  # the module itself too: the scope of the file's globals
            for node in ctx.nodes:
                self._owner[id(node)] = ctx
        except (OSError, ValueError, SyntaxError, RecursionError, MemoryError):
            ctx = None
        self._contexts[path] = ctx
        return ctx

    def mentions(self, ctx: FileContext, words: tuple[str, ...], depth: int = 2) -> bool:
        """Whether a module of the tree that ``ctx`` imports names from (and those it imports from, ``depth`` deep)
        says one of ``words``: where the loop model could find a helper with a training step. Modules are found
        as ``function`` finds them, from the import statements, without parsing."""
        todo = [(self._resolve(self._file_path(ctx)), self._imported_modules(ctx), depth)]
        seen: set[Path] = set()
        extra = self.search_folders(ctx)
        while todo:
            here, modules, left = todo.pop()
            for module, level in modules:
                path = self.module_file(here, module, level, extra)
                if path is None or path in seen:
                    continue
                seen.add(path)
                text = self._text(path)
                if any(w in text for w in words):
                    return True
                if left > 1:
                    todo.append((path, _imports_in(text), left - 1))
        return False

    @staticmethod
    def _imported_modules(ctx: FileContext) -> list[tuple[str, int]]:
        found = [(full.rpartition(".")[0] or full, 0) for full in ctx.imports.values()]
        found += [(full, 0) for full in ctx.imports.values()]
        found += [(module or name, level) for level, module, name in ctx.relative_imports.values()]
        return found

    def imported_elsewhere(self, ctx: FileContext, name: str) -> bool:
        """Whether another file of the tree may import ``ctx``'s file and says ``name``: a caller of its function
        ``name`` that ``ctx`` cannot see. The cache's dependency digest covers these files (see ``Dependencies``)."""
        if self._dependencies is None:
            self._dependencies = Dependencies(list(self._files.values()), {str(p): t for p, t in self._texts.items()})
        word = re.compile(rf"\b{re.escape(name)}\b")
        return any(word.search(self._dependencies.text(other)) for other in self._dependencies.importers(ctx.path))

    def parsed(self, path: Path) -> FileContext | None:
        """The file at ``path`` if a helper lookup has parsed it already (never parses)."""
        return self._contexts.get(self._resolve(path))

    def keep(self, ctx: FileContext) -> None:
        """Keep a checked script's parse for a file checked after it that imports it: the last ``RECENT`` only (a
        project's helpers sit beside the scripts that import them), so the heap stays small."""
        if not ctx.path.endswith(".py"):
            return  # a notebook's program is not the text an import reads
        path = self._resolve(Path(ctx.path))
        if path in self._contexts or path not in self._files:
            return
        self._recent[path] = ctx
        self._recent.move_to_end(path)
        if len(self._recent) > RECENT:
            self._recent.popitem(last=False)

    def lines_of(self, path: str) -> list[str]:
        """The lines of a file of the tree (for ``# noqa`` on a finding in a helper of another file)."""
        ctx = self.context(Path(path))
        return ctx.lines if ctx is not None else []

    def owner(self, node: ast.AST) -> FileContext | None:
        """The file a node parsed through the index belongs to."""
        return self._owner.get(id(node))

    # -- imports -----------------------------------------------------------------
    def module_file(self, importer: Path, module: str, level: int = 0, extra: tuple[Path, ...] = ()) -> Path | None:
        """The file of the tree that ``import module`` names from the file ``importer``, or None (outside the tree);
        ``extra``: folders the importer put on ``sys.path`` (see :meth:`search_folders`)."""
        here = self._folders.get(importer)
        if here is None:
            here = self._folders[importer] = self._resolve(importer).parent
        head = module.partition(".")[0]
        if not level and head not in self._heads and not self._beside(here, head) \
                and not any(self._on_disk(f / f"{head}.py") or self._on_disk(f / head / "__init__.py") for f in extra):
            return None  # `torch`, `numpy`: no module of the tree starts so
        memo = (here, module, level, extra)
        if memo not in self._modules:
            self._modules[memo] = self._find(here, module, level, extra)
        return self._modules[memo]

    def _find(self, here: Path, module: str, level: int, extra: tuple[Path, ...]) -> Path | None:
        parts = module.split(".") if module else []
        if level:
            base = here
            for _ in range(level - 1):
                base = base.parent
            return self._existing(base, parts)
        folder = here
        while True:
            found = self._existing(folder, parts)
            if found is not None:
                return found
            if any(folder == root for root in self._roots) or folder.parent == folder:
                break
            folder = folder.parent
        return next((found for base in extra if (found := self._existing(base, parts)) is not None), None)

    def search_folders(self, ctx: FileContext, depth: int = 0) -> tuple[Path, ...]:
        """Folders of the tree that ``ctx`` adds to ``sys.path`` (``sys.path.insert(0, "lib")``,
        ``sys.path.append(os.path.join(os.path.dirname(__file__), ".."))``, through names the module assigns once),
        so that the imports after the edit resolve; and those a module of the tree it imports adds when imported
        (``import _init_paths``). A relative folder is read from the file's folder and from each checked root (the
        working directory is unknown)."""
        cached = ctx.__dict__.get("_search_folders")
        if cached is not None:
            return cached
        folders: list[Path] = []
        here = self._resolve(self._file_path(ctx))
        if "sys.path" in ctx.source:
            names = {key_of(a.targets[0]): a.value for a in ctx.tree.body if isinstance(a, ast.Assign) and len(a.targets) == 1}
            for entry in _path_entries(ctx):
                value = _path_of(entry, here, names)
                if value is None:
                    continue
                for base in ([value] if value.is_absolute() else [here.parent, *self._roots]):
                    folder = (base / value).resolve()
                    if folder.is_dir() and folder not in folders:
                        folders.append(folder)
        if depth < 2:
            for node in ctx.tree.body:  # `import _init_paths`: a module of the tree whose import edits sys.path
                for alias in node.names if isinstance(node, ast.Import) else []:
                    path = self.module_file(here, alias.name)
                    if path is not None and path != here and "sys.path" in self._text(path) and (imported := self.context(path)) is not None:
                        folders += [f for f in self.search_folders(imported, depth + 1) if f not in folders]
        ctx.__dict__["_search_folders"] = found = tuple(folders)
        return found

    def _existing(self, base: Path, parts: list[str]) -> Path | None:
        if not parts:
            candidate = base / "__init__.py"
            return candidate if candidate in self._files or self._on_disk(candidate) else None
        for candidate in (base.joinpath(*parts[:-1], parts[-1] + ".py"), base.joinpath(*parts, "__init__.py")):
            if candidate in self._files or self._on_disk(candidate):
                return candidate
        return None

    def _beside(self, here: Path, head: str) -> bool:
        """Whether a module ``head`` sits in ``here`` or a folder above it, up to a checked root: the sibling module a
        script imports when only the script was named (`trainwell check train.py` with `from models import Net`).
        Answered per folder, so sibling folders share what their parents hold (`torch` asked from every folder)."""
        known = self._besides.get((here, head))
        if known is None:
            if self._root_of(here) is None:
                known = False
            elif self._on_disk(here / f"{head}.py") or self._on_disk(here / head / "__init__.py"):
                known = True
            elif any(here == root for root in self._roots) or here.parent == here:
                known = False
            else:
                known = self._beside(here.parent, head)
            self._besides[(here, head)] = known
        return known

    def _root_of(self, folder: Path) -> Path | None:
        """The first checked root that is ``folder`` or a folder above it, once per folder (``Path.parents`` builds a
        path per level, and each import asks for many candidates of the same folders)."""
        if folder not in self._under:
            self._under[folder] = next((root for root in self._roots if folder == root or root in folder.parents), None)
        return self._under[folder]

    @staticmethod
    def _file_path(ctx: FileContext) -> Path:
        """``Path(ctx.path)``, one object per file: a key of the memos above, whose hash a Path computes once."""
        found = ctx.__dict__.get("_index_path")
        if found is None:
            found = ctx.__dict__["_index_path"] = Path(ctx.path)
        return found

    def _resolve(self, path: Path) -> Path:
        """``path.resolve()``, once per path of the run (the tree does not change while it is checked)."""
        found = self._real.get(path)
        if found is None:
            found = self._real[path] = path.resolve()
        return found

    def _on_disk(self, candidate: Path) -> bool:
        """A Python file under a checked root that was not itself named (read as a helper, never reported on its own),
        outside virtualenvs and installed packages."""
        known = self._disk.get(candidate)
        if known is None:
            inside = self._root_of(candidate.parent) if candidate.is_file() else None  # most candidates are missing: one stat
            known = inside is not None and not any(
                part in _NOT_SOURCES or part.startswith(".") for part in candidate.relative_to(inside).parts[:-1])
            self._disk[candidate] = known
        return known

    def function(self, importer: FileContext, func: ast.expr) -> tuple[FileContext, Function] | None:
        """The function of another file of the tree that a call's callee names (``train_one_epoch``, ``engine.evaluate``)."""
        found = self._definition(importer, func, "def {}(")
        fn = found[0].functions.get(found[1]) if found is not None else None
        if fn is None and isinstance(func, ast.Name) and func.id not in importer.functions and func.id not in importer.imports \
                and func.id not in importer.relative_imports:  # `from utils import *`
            star = self._star_definition(importer, func.id, "functions", {id(importer)})
            return (star[0], star[1]) if star is not None else None  # type: ignore[return-value]
        return (found[0], fn) if found is not None and fn is not None else None  # type: ignore[index]

    def class_def(self, importer: FileContext, func: ast.expr) -> tuple[FileContext, ast.ClassDef] | None:
        """The class of another file of the tree that a name of ``importer`` stands for (``GPT`` after ``from model import GPT``)."""
        found = self._definition(importer, func, "class {}")
        cls = found[0].classes.get(found[1]) if found is not None else None
        return (found[0], cls) if found is not None and cls is not None else None  # type: ignore[index]

    def module_class(self, importer: FileContext, func: ast.expr) -> tuple[FileContext, str] | None:
        """The file of the tree and the name of the ``nn.Module`` class that the callee ``func`` names through
        ``importer``'s imports (``from models import Net``, ``from .models import Net``, ``models.Net`` after ``import
        models``, ``from models import *``), or None."""
        name = key_of(func)
        if name is None or name in importer.classes:
            return None
        memo = importer.__dict__.setdefault("_module_classes", {})  # name -> found: asked for every constructor call
        if name not in memo:
            memo[name] = self._module_class(importer, func, name)
        return memo[name]

    def _module_class(self, importer: FileContext, func: ast.expr, name: str) -> tuple[FileContext, str] | None:
        found = self.class_def(importer, func)
        if found is None and "." not in name and name not in importer.imports and name not in importer.relative_imports:
            found = self._star_definition(importer, name, "classes", {id(importer)})  # type: ignore[assignment]
        if found is None or not found[0].is_module_class(found[1].name):
            return None
        return found[0], found[1].name

    def _star_definition(self, importer: FileContext, name: str, kind: str, seen: set[int]) -> tuple[FileContext, ast.AST] | None:
        """The class or function (``kind``: ``classes`` / ``functions``) ``name`` that ``importer``'s star imports of
        the tree's modules bring in, following a package's ``__init__.py`` that star-imports its submodules in turn
        (``from .resnet import *``)."""
        stars = importer.__dict__.get("_star_imports")
        if stars is None:  # asked for every callee the file does not define (`range`, `print`): its star imports, listed once
            stars = importer.__dict__["_star_imports"] = [
                node for node in importer.tree.body
                if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names) and (node.module or node.level)]
        for node in stars:
            path = self.module_file(self._file_path(importer), node.module or "", node.level, self.search_folders(importer))
            target = self.context(path) if path is not None else None
            if target is None or id(target) in seen:
                continue
            seen.add(id(target))
            if name in getattr(target, kind):
                return target, getattr(target, kind)[name]
            if len(seen) < 64 and (deeper := self._star_definition(target, name, kind, seen)) is not None:
                return deeper
        return None

    def _definition(self, importer: FileContext, func: ast.expr, spelling: str, depth: int = 0) -> tuple[FileContext, str] | None:
        """The parsed file of the tree and the top-level name there that an imported name of ``importer`` resolves to,
        through the modules that re-export it (a package's ``__init__.py`` saying ``from .train_utils import train``)."""
        name = key_of(func)
        if name is None:
            return None
        memo = importer.__dict__.setdefault("_definitions", {})  # name -> found: asked for each call and constructor of the file
        if (name, spelling) not in memo:
            memo[(name, spelling)] = self._definition_of(importer, name, spelling, depth)
        return memo[(name, spelling)]

    def _definition_of(self, importer: FileContext, name: str, spelling: str, depth: int) -> tuple[FileContext, str] | None:
        head, _, rest = name.partition(".")
        imported = importer.relative_imports.get(head)
        if imported is not None:
            level, module, attr = imported
        elif head in importer.imports:
            full = importer.imports[head] + ("." + rest if rest else "")
            module, _, attr = full.rpartition(".")
            level = 0
            rest = ""
        else:
            return None
        if rest:  # `import engine` then `engine.train_one_epoch(...)`: the attribute is the function
            module, attr = ".".join(p for p in (module, attr) if p), rest
        if "." in attr or not module and not level:
            return None
        path = self.module_file(self._file_path(importer), module, level, self.search_folders(importer))
        if path is not None and spelling.format(attr) not in self._text(path):
            if depth < 4 and "import" in self._text(path) and re.search(rf"\b{re.escape(attr)}\b", self._text(path)):
                reexporter = self.context(path)  # `from .train_utils import train` in the package's __init__.py
                if reexporter is not None and reexporter is not importer and (attr in reexporter.imports or attr in reexporter.relative_imports):
                    return self._definition(reexporter, ast.Name(id=attr), spelling, depth + 1)
            return None  # no such definition there: no need to parse the file
        target = self.context(path) if path is not None else None
        if target is None or target is importer:
            return None
        return target, attr

    def _text(self, path: Path) -> str:
        if path not in self._texts:
            try:
                self._texts[path] = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                self._texts[path] = ""
        return self._texts[path]


def _path_entries(ctx: FileContext) -> list[ast.expr]:
    """What the file puts on ``sys.path``: the argument of each ``sys.path.insert`` / ``append``, and where that is a
    parameter of a function of the file (``def add_path(path): sys.path.insert(0, path)``), the arguments its calls
    give it (``add_path(lib_path)``)."""
    found: list[ast.expr] = []
    for call in ctx.calls:
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr in ("insert", "append") and key_of(func.value) == "sys.path" and call.args):
            continue
        entry = call.args[-1]
        owner = next((fn for fn in ctx.functions.values() if any(n is call for n in walk(fn))), None)
        params = [a.arg for a in owner.args.args] if owner is not None else []
        if isinstance(entry, ast.Name) and entry.id in params:
            index = params.index(entry.id)
            found += [c.args[index] for c in ctx.calls if key_of(c.func) == owner.name and len(c.args) > index]  # type: ignore[union-attr]
        else:
            found.append(entry)
    return found


def _path_of(node: ast.AST, here: Path, names: dict[str | None, ast.expr] | None = None, depth: int = 0) -> Path | None:
    """The folder a ``sys.path`` entry names, for the few spellings scripts use (``names``: the module's own
    assignments, ``lib_path = osp.join(this_dir, "..", "lib")``); None for anything else."""
    names = names or {}
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return Path(node.value)
    if isinstance(node, ast.Name) and node.id == "__file__":
        return here
    if isinstance(node, ast.Name) and node.id in names and depth < 8:
        return _path_of(names[node.id], here, names, depth + 1)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        left, right = _path_of(node.left, here, names, depth + 1), _path_of(node.right, here, names, depth + 1)
        return left / right if left is not None and right is not None else None
    if isinstance(node, ast.Attribute) and node.attr == "parent":
        inner = _path_of(node.value, here, names, depth + 1)
        return inner.parent if inner is not None else None
    if not isinstance(node, ast.Call):
        return None
    name = (key_of(node.func) or "").rsplit(".", 1)[-1]
    if name in ("str", "abspath", "realpath", "normpath", "Path", "resolve", "absolute", "expanduser"):
        inner = node.args[0] if node.args else node.func.value if isinstance(node.func, ast.Attribute) and name in ("resolve", "absolute") else None
        return _path_of(inner, here, names, depth + 1) if inner is not None else None
    if name == "dirname" and len(node.args) == 1:
        inner = _path_of(node.args[0], here, names, depth + 1)
        return inner.parent if inner is not None else None
    if name == "join" and node.args:
        parts = [_path_of(a, here, names, depth + 1) for a in node.args]
        return Path(*parts) if all(p is not None for p in parts) else None  # type: ignore[misc]
    return None


_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import", re.M)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+([\w.]+)", re.M)


def _imports_in(text: str) -> list[tuple[str, int]]:
    """(module, level) of the import statements at the start of a line of ``text``."""
    return [(module, len(dots)) for dots, module in _FROM.findall(text)] + [(m, 0) for m in _IMPORT.findall(text)]
