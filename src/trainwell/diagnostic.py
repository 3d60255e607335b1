"""The one finding type that every detector emits: the static checker, the
runtime checker and the trainer's own preflight checks."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from trainwell.catalog import CATALOG

Applicability = Literal["safe", "unsafe", "display"]


@dataclass(frozen=True)
class Edit:
    """Replace the source between two (line, column) positions (1-based lines, 0-based columns)."""

    line: int
    column: int
    end_line: int
    end_column: int
    content: str


@dataclass(frozen=True)
class Fix:
    """A suggested change; ``applicability`` says whether ``--fix`` may apply it unasked."""

    message: str
    edits: tuple[Edit, ...]
    applicability: Applicability = "safe"


@dataclass
class Finding:
    """A bug of the catalog seen at one place in the user's code.

    ``step`` is set by the runtime checker (the optimizer step at which it was
    first seen) and ``count`` is how many times it was seen; the static checker
    leaves both at their defaults.
    """

    code: str
    message: str
    path: str
    line: int
    column: int = 0
    end_line: int | None = None
    end_column: int | None = None
    fix: Fix | None = None
    hint: str | None = None
    step: int | None = None
    count: int = 1
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.code not in CATALOG:
            raise ValueError(f"unknown bug code {self.code!r}")

    @property
    def name(self) -> str:
        return CATALOG[self.code].name

    def location(self) -> str:
        return f"{self.path}:{self.line}:{self.column + 1}"

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape shared by `trainwell check --format json` and `trainwell run --report`."""
        return {
            "code": self.code,
            "name": self.name,
            "message": self.message,
            "path": self.path,
            "line": self.line,
            "column": self.column + 1,
            "end_line": self.end_line if self.end_line is not None else self.line,
            "end_column": (self.end_column + 1) if self.end_column is not None else self.column + 1,
            "fix": asdict(self.fix) if self.fix is not None else None,
            "hint": self.hint,
            "step": self.step,
            "count": self.count,
        }
