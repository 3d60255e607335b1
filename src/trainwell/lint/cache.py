"""Results cached by file content (ruff's cache): a file whose inputs did not change is not checked again.

A file's key is the sha256 of everything its result depends on: its path and
bytes, trainwell's version and the checker's own source (an editable install
changes without a new version), the enabled codes, the target PyTorch, the
preview and force flags, and the *dependency digest*: the contents of every
file of the checked tree it may import, directly or through others, and of
the files that import it directly (the project index reads other files only
through imports; see :mod:`trainwell.lint.dependencies`). The cache is one JSON file in the cache
folder, read once per run and replaced atomically at its end. Anything unreadable is a miss,
never an error, so a corrupt or foreign cache can only cost time. Results that
hold an internal error are not stored: the next run tries again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any, Iterable, Sequence

from trainwell import __version__
from trainwell.diagnostic import Edit, Finding, Fix
from trainwell.lint.dependencies import Dependencies
from trainwell.lint.problem import Problem

FOLDER_NAME = ".trainwell_cache"
_FILE = "results.json"
_IGNORE = "# Created by trainwell: nothing here belongs in version control.\n*\n"
_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by trainwell.\n"


class Cache:
    """The cached results in one folder; ``get`` and ``put`` during a run, ``save`` at its end."""

    def __init__(self, folder: Path, files: Iterable[Path] = ()) -> None:
        self.folder = folder
        self._files = list(files)
        self._dependencies: Dependencies | None = None
        self._checker: str | None = None
        self._old: dict[str, dict[str, Any]] = {}
        self._new: dict[str, dict[str, Any]] = {}
        try:
            data = json.loads((folder / __version__ / _FILE).read_text(encoding="utf-8"))
            if isinstance(data, dict):
                self._old = {k: v for k, v in data.items() if isinstance(v, dict)}
        except (OSError, ValueError):
            pass

    def dependency_digest(self, path: str) -> str:
        """A digest of the files of the tree that ``path`` may import (the tree is scanned on first use)."""
        if self._dependencies is None:
            self._dependencies = Dependencies(self._files)
        return self._dependencies.digest(path)

    def key(self, path: str, data: bytes, codes: Iterable[str], target: tuple[int, int], preview: bool, force: bool, digest: str) -> str:
        """The sha256 of one file's inputs."""
        if self._checker is None:
            self._checker = _checker_digest()
        settings = json.dumps([__version__, self._checker, path, sorted(codes), list(target), preview, force, digest])
        return hashlib.sha256(settings.encode() + b"\0" + data).hexdigest()

    def get(self, key: str) -> tuple[list[Finding], list[Any]] | None:
        """The stored findings and problems for ``key``, or None (absent or not decodable)."""
        entry = self._old.get(key) or self._new.get(key)
        if entry is None:
            return None
        try:
            findings = [_finding(item) for item in entry["findings"]]
            problems = [Problem(**item) for item in entry["problems"]]
        except (KeyError, TypeError, ValueError, AttributeError):
            return None
        self._new[key] = entry
        return findings, problems

    def put(self, key: str, path: str, findings: Sequence[Finding], problems: Sequence[Any]) -> None:
        if any(p.kind == "internal-error" for p in problems):
            return
        self._new[key] = {"path": path, "findings": [asdict(f) for f in findings], "problems": [asdict(p) for p in problems]}

    def save(self) -> None:
        """Write this run's entries, and keep the old ones of files this run did not see. Failures are ignored."""
        seen = {entry.get("path") for entry in self._new.values()}
        merged = {k: v for k, v in self._old.items() if v.get("path") not in seen}
        merged.update(self._new)
        if merged == self._old:
            return
        temporary: str | None = None
        try:
            target = self.folder / __version__
            target.mkdir(parents=True, exist_ok=True)
            for name, text in ((".gitignore", _IGNORE), ("CACHEDIR.TAG", _TAG)):
                if not (self.folder / name).exists():
                    (self.folder / name).write_text(text, encoding="utf-8")
            handle, temporary = tempfile.mkstemp(dir=target, suffix=".tmp")
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump(merged, out, separators=(",", ":"))
            os.chmod(temporary, 0o644)  # mkstemp's 0600 would lock out a CI cache shared between users
            os.replace(temporary, target / _FILE)
        except (OSError, TypeError, ValueError):  # read-only tree, full disk, a value JSON cannot hold
            if temporary is not None:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)

def _checker_digest() -> str:
    """A digest of the code that decides results: the checker, the catalog, the finding type."""
    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted([*package.joinpath("lint").rglob("*.py"), *package.joinpath("catalog").glob("*.py"), package / "diagnostic.py"]):
        with contextlib.suppress(OSError):
            digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _finding(item: dict[str, Any]) -> Finding:
    fix = item.get("fix")
    if fix is not None:
        fix = Fix(fix["message"], tuple(Edit(**edit) for edit in fix["edits"]), fix["applicability"])
    return Finding(**{**item, "fix": fix})
