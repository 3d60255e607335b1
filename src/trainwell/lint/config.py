"""``[tool.trainwell]`` in pyproject.toml: select, ignore, target-version, exclude.

Found by walking up from the checked path. The target PyTorch version defaults
to the minimum the checked project declares (``torch>=2.6`` -> 2.6), else 2.4.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from trainwell.errors import TrainwellError

DEFAULT_TARGET = (2, 4)
_KEYS = {"select", "ignore", "target-version", "exclude"}
_TORCH_REQ = re.compile(r"^\s*torch\s*(?:\[[^\]]*\])?\s*(?:>=|==|~=|>)\s*(\d+)\.(\d+)")


@dataclass
class Config:
    """The settings that apply to one run."""

    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    target_version: tuple[int, int] | None = None
    exclude: list[str] = field(default_factory=list)
    root: Path | None = None  # folder of the pyproject.toml it came from
    declared_torch: tuple[int, int] | None = None


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
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        return Config(root=path.parent)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as error:
        raise TrainwellError(f"{path}: cannot read it as TOML ({error}); fix the file or check a folder outside it")
    table = data.get("tool", {}).get("trainwell", {})
    unknown = set(table) - _KEYS
    if unknown:
        raise TrainwellError(f"{path}: unknown key {sorted(unknown)[0]!r} in [tool.trainwell]; known keys: {', '.join(sorted(_KEYS))}")
    config = Config(root=path.parent, declared_torch=_declared_torch(data))
    for key in ("select", "ignore", "exclude"):
        if key in table and not (isinstance(table[key], list) and all(isinstance(v, str) for v in table[key])):
            raise TrainwellError(f"{path}: [tool.trainwell] {key} must be a list of strings, e.g. {key} = [\"TW1\"]")
    config.select = table.get("select")
    config.ignore = list(table.get("ignore", []))
    config.exclude = list(table.get("exclude", []))
    if "target-version" in table:
        config.target_version = parse_version(table["target-version"], f"{path} [tool.trainwell] target-version")
    return config


def _declared_torch(data: dict) -> tuple[int, int] | None:
    for requirement in data.get("project", {}).get("dependencies", []) or []:
        match = _TORCH_REQ.match(str(requirement))
        if match:
            return int(match.group(1)), int(match.group(2))
    return None
