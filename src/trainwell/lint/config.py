"""``[tool.trainwell]`` in pyproject.toml, and the minimum PyTorch a project declares.

The configuration is found by walking up from the checked path. The target
PyTorch version of a file is, in order: ``--target-version``, the config's
``target-version``, the minimum PyTorch declared by the nearest folder above
the file that declares torch at all (pyproject.toml, requirements*.txt,
setup.py / setup.cfg ``install_requires``, environment.yml), else 2.4. A
folder that names torch without a minimum (``torch``, ``torch<2.6``) declares
none: its files get the default.
"""

from __future__ import annotations

import ast
import configparser
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from trainwell.errors import TrainwellError

DEFAULT_TARGET = (2, 4)
_KEYS = {"select", "ignore", "target-version", "exclude", "preview", "cache-dir"}
_TORCH = re.compile(r"^\s*-?\s*(?:py)?torch(?![\w.-])\s*(?:\[[^\]]*\])?(?P<spec>[^;#]*)", re.I)
_MINIMUM = re.compile(r"(?:>=|===|==|~=|\^|(?<![<>!=~])=|>|^\s*)\s*v?(\d+)\.(\d+)")
_REQUIREMENT_FILES = ("requirements*.txt", "environment.yml", "environment.yaml")
Declared = tuple[bool, "tuple[int, int] | None"]  # (names torch, its lowest declared minimum)


@dataclass
class Config:
    """The settings that apply to one run."""

    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    target_version: tuple[int, int] | None = None
    exclude: list[str] = field(default_factory=list)
    root: Path | None = None  # folder of the pyproject.toml it came from
    preview: bool = False
    cache_dir: Path | None = None
    _folders: dict[Path, tuple[int, int] | None] = field(default_factory=dict, repr=False)  # folder -> declared_for
    _declared: dict[Path, Declared] = field(default_factory=dict, repr=False)  # folder -> declared_in

    def declared_for(self, path: Path) -> tuple[int, int] | None:
        """The minimum PyTorch declared by the nearest folder above ``path`` that names torch.

        The walk stops at the config root, a repository root (``.git``) or the
        filesystem root: a checkout's files never take another project's minimum.
        """
        start = path.parent
        if start not in self._folders:
            folder, root = start.resolve(), self.root  # find_pyproject gives it resolved
            while True:
                if folder not in self._declared:
                    self._declared[folder] = declared_in(folder)
                names_torch, minimum = self._declared[folder]
                if names_torch or folder == root or (folder / ".git").exists() or folder.parent == folder:
                    break
                folder = folder.parent
            self._folders[start] = minimum
        return self._folders[start]

def parse_version(text: str, where: str) -> tuple[int, int]:
    match = re.fullmatch(r"\s*(\d+)\.(\d+)(?:\.\d+)?\s*", str(text))
    if not match:
        raise TrainwellError(f"{where}: target version {text!r} is not MAJOR.MINOR; write e.g. 2.4")
    return int(match.group(1)), int(match.group(2))


def find_pyproject(start: Path) -> Path | None:
    start = start.resolve()
    for folder in [start, *start.parents] if start.is_dir() else list(start.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def load(start: Path) -> Config:
    """The configuration that governs ``start`` (a file or a folder)."""
    path = find_pyproject(start)
    if path is None:
        return Config()
    tomllib = _tomllib()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as error:
        raise TrainwellError(f"{path}: cannot read it as TOML ({error}); fix the file or check a folder outside it")
    table = data.get("tool", {}).get("trainwell", {})
    unknown = set(table) - _KEYS
    if unknown:
        raise TrainwellError(f"{path}: unknown key {sorted(unknown)[0]!r} in [tool.trainwell]; known keys: {', '.join(sorted(_KEYS))}")
    config = Config(root=path.parent)
    for key in ("select", "ignore", "exclude"):
        if key in table and not (isinstance(table[key], list) and all(isinstance(v, str) for v in table[key])):
            raise TrainwellError(f"{path}: [tool.trainwell] {key} must be a list of strings, e.g. {key} = [\"TW1\"]")
    config.select = table.get("select")
    config.ignore = list(table.get("ignore", []))
    config.exclude = list(table.get("exclude", []))
    if "target-version" in table:
        config.target_version = parse_version(table["target-version"], f"{path} [tool.trainwell] target-version")
    if not isinstance(table.get("preview", False), bool):
        raise TrainwellError(f"{path}: [tool.trainwell] preview must be true or false, e.g. preview = true")
    config.preview = table.get("preview", False)
    if "cache-dir" in table:
        if not isinstance(table["cache-dir"], str) or not table["cache-dir"].strip():
            raise TrainwellError(f"{path}: [tool.trainwell] cache-dir must be a folder path, e.g. cache-dir = \".trainwell_cache\"")
        config.cache_dir = path.parent / table["cache-dir"]
    return config


def declared_in(folder: Path) -> Declared:
    """Whether the project files in ``folder`` name torch, and the lowest minimum they declare."""
    requirements: list[str] = []
    pyproject = _toml(folder / "pyproject.toml") if (folder / "pyproject.toml").is_file() else None
    if pyproject:
        requirements += _pyproject_requirements(pyproject)
    requirements += _setup_cfg(folder / "setup.cfg") + _setup_py(folder / "setup.py")
    for pattern in _REQUIREMENT_FILES:
        for path in sorted(folder.glob(pattern)):
            requirements += _requirement_lines(path)
    minimums = [m for m in (_minimum(r) for r in requirements) if m is not False]
    versions = [m for m in minimums if m is not None]
    return bool(minimums), (min(versions) if versions else None)


def _minimum(requirement: str) -> tuple[int, int] | None | bool:
    """False: not torch; None: torch without a minimum; else the minimum (``torch>=2.1,<3`` -> (2, 1))."""
    match = _TORCH.match(requirement)
    if not match:
        return False
    for clause in match.group("spec").split(","):
        found = _MINIMUM.search(clause)
        if found and not clause.strip().startswith(("<", "!=")):
            return int(found.group(1)), int(found.group(2))
    return None


def _tomllib() -> Any:
    """The standard library's TOML reader; on Python 3.10 its backport, tomli (a dependency there)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    return tomllib


def _toml(path: Path) -> dict[str, Any] | None:
    try:
        return _tomllib().loads(path.read_text(encoding="utf-8"))
    except Exception:  # noqa: BLE001 - another project's broken file only means "declares nothing"
        return None


def _pyproject_requirements(data: dict[str, Any]) -> list[str]:
    found = [str(r) for r in data.get("project", {}).get("dependencies", []) or []]
    poetry = data.get("tool", {}).get("poetry", {}).get("dependencies", {}) or {}
    for name in ("torch", "pytorch"):
        spec = poetry.get(name)
        spec = spec.get("version", "") if isinstance(spec, dict) else spec
        if isinstance(spec, str):
            found.append(f"torch {spec}")
    return found


def _setup_cfg(path: Path) -> list[str]:
    if not path.is_file():
        return []
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
        return parser.get("options", "install_requires", fallback="").splitlines()
    except (configparser.Error, UnicodeDecodeError, OSError):
        return []


def _setup_py(path: Path) -> list[str]:
    """``install_requires=[...]`` in a setup.py: a literal list, or a module-level name bound to one."""
    if not path.is_file():
        return []
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (SyntaxError, ValueError, UnicodeDecodeError, OSError):
        return []
    lists = {t.id: node.value for node in tree.body if isinstance(node, ast.Assign) for t in node.targets if isinstance(t, ast.Name)}
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "install_requires":
            value = lists.get(node.value.id, node.value) if isinstance(node.value, ast.Name) else node.value
            found += _strings(value.elts if isinstance(value, (ast.List, ast.Tuple)) else ())
    return found


def _strings(nodes: Iterable[ast.AST]) -> list[str]:
    return [n.value for n in nodes if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _requirement_lines(path: Path, depth: int = 0) -> list[str]:
    """The lines of a requirements file or environment.yml, following ``-r other.txt`` a few levels."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    found = []
    for line in lines:
        include = re.match(r"^\s*(?:-r|--requirement)\s*(\S+)", line)
        if include and depth < 3:
            found += _requirement_lines(path.parent / include.group(1), depth + 1)
        else:
            found.append(line)
    return found
