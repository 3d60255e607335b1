"""Which files `trainwell check` reads: a project walked as ruff walks it.

A folder is searched for ``*.py`` and ``*.ipynb``. The search skips what is
not the project's own code: virtual environments (any folder holding
``pyvenv.cfg`` or ``conda-meta/``), installed packages (``site-packages``,
``__pypackages__``, ``node_modules``), build outputs and tool caches (the
folder names of ruff's default ``exclude``), hidden folders, and whatever the
project's ``.gitignore`` / ``.ignore`` files (and ``.git/info/exclude``) say,
read with the ``pathspec`` library's gitignore semantics: each file applies to
its own folder and below, a deeper file wins, ``!pattern`` re-includes. Ignore
files in the folders above the searched one count up to the repository root
(the folder with ``.git``). ``respect_gitignore=False`` turns the ignore files
off. A file named on the command line is always checked.
"""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Sequence

from trainwell.errors import TrainwellError

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

SUFFIXES = (".py", ".ipynb")
IGNORE_FILES = (".gitignore", ".ignore")
# ruff's default exclude, less the hidden names (every hidden folder is skipped), plus build/
SKIP_DIRS = frozenset({"__pypackages__", "_build", "buck-out", "build", "dist", "node_modules", "site-packages", "venv"})
_ENVIRONMENT_MARKERS = ("pyvenv.cfg", "conda-meta")


def is_environment(folder: Path) -> bool:
    """Whether ``folder`` is a Python environment (a venv or virtualenv, or a conda env) rather than project code."""
    return any((folder / marker).exists() for marker in _ENVIRONMENT_MARKERS)


def excluded(path: Path, patterns: Sequence[str], root: Path | None) -> bool:
    """Whether ``path`` matches one of the config's ``exclude`` globs (relative to the config root, or by name)."""
    if not patterns:
        return False
    try:
        relative = path.resolve().relative_to(root.resolve()).as_posix() if root else path.as_posix()
    except ValueError:
        relative = path.as_posix()
    return any(fnmatch.fnmatch(relative, p) or fnmatch.fnmatch(path.name, p) or relative.startswith(p.rstrip("/") + "/") for p in patterns)


class _Ignores:
    """The ignore files that apply to a folder: (folder, spec) from the outermost to the deepest."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._specs: dict[Path, GitIgnoreSpec | None] = {}

    def spec_of(self, folder: Path) -> GitIgnoreSpec | None:
        """The patterns of ``folder``'s own ignore files (and ``.git/info/exclude`` at a repository root)."""
        if folder not in self._specs:
            lines: list[str] = []
            for name in (*IGNORE_FILES, ".git/info/exclude"):
                try:
                    lines += (folder / name).read_text(encoding="utf-8", errors="replace").splitlines()
                except OSError:
                    continue
            if any(line.strip() for line in lines):
                from pathspec import GitIgnoreSpec  # here: a tree without ignore files never pays for its import

                self._specs[folder] = GitIgnoreSpec.from_lines(lines)
            else:
                self._specs[folder] = None
        return self._specs[folder]

    def above(self, start: Path) -> list[tuple[Path, GitIgnoreSpec]]:
        """The specs of the folders above ``start`` (itself excluded) up to its repository root; none outside a repository."""
        if not self.enabled:
            return []
        chain: list[Path] = []
        for folder in start.parents:
            chain.append(folder)
            if (folder / ".git").exists():
                break
        else:
            return []
        return [(f, s) for f in reversed(chain) if (s := self.spec_of(f)) is not None]

    @staticmethod
    def ignored(path: Path, is_dir: bool, specs: Sequence[tuple[Path, GitIgnoreSpec]]) -> bool:
        """Git's answer for ``path``: the deepest ignore file whose pattern matches decides."""
        verdict = False
        for folder, spec in specs:
            relative = path.relative_to(folder).as_posix() + ("/" if is_dir else "")
            include = spec.check_file(relative).include
            if include is not None:
                verdict = include
        return verdict


def discover(paths: Sequence[str | os.PathLike[str]], exclude: Sequence[str] = (), root: Path | None = None,
             respect_gitignore: bool = True, force_exclude: bool = False) -> list[Path]:
    """The files to check: named files as they are, folders searched (see the module's docstring).

    ``exclude`` prunes what the search finds; a folder the user names is
    searched even when it matches (as a named file is checked, unless
    ``force_exclude``: pre-commit names every file it has).
    """
    ignores = _Ignores(respect_gitignore)
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise TrainwellError(f"{raw}: no such file or folder; give paths to Python files or folders (default: .)")
        if path.is_file():
            if not (force_exclude and excluded(path, exclude, root)):
                files.append(path)
            continue
        patterns = () if excluded(path, exclude, root) else exclude
        files += _walk(path, patterns, root, ignores)
    return files


def _walk(top: Path, patterns: Sequence[str], root: Path | None, ignores: _Ignores) -> Iterator[Path]:
    absolute = top.resolve()
    inherited = ignores.above(absolute)
    stack = [(top, absolute, inherited)]
    while stack:
        folder, real, specs = stack.pop()
        own = ignores.spec_of(real) if ignores.enabled else None
        if own is not None:
            specs = [*specs, (real, own)]
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        below = []
        for entry in entries:
            path = Path(folder, entry.name)
            if entry.is_dir(follow_symlinks=False):
                if entry.name.startswith(".") or entry.name in SKIP_DIRS or is_environment(path) or excluded(path, patterns, root):
                    continue
                if specs and ignores.ignored(real / entry.name, True, specs):
                    continue
                below.append((path, real / entry.name, specs))
            elif entry.name.endswith(SUFFIXES) and not excluded(path, patterns, root):
                if specs and ignores.ignored(real / entry.name, False, specs):
                    continue
                yield path
        stack.extend(reversed(below))
