"""The one finding type that every detector emits: the static checker, the
runtime checker and the trainer's own preflight checks."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from trainwell.catalog import CATALOG

Applicability = Literal["safe", "unsafe", "display"]


@dataclass(frozen=True)
class Edit:
    """Replace the source between two (line, column) positions.

    Lines are 1-based; columns are 0-based character offsets into the line (a
    slice position, as ``ast``'s ``col_offset``), so an insertion point sits
    between characters. JSON output prints them 1-based like every location.
    """

    line: int
    column: int
    end_line: int
    end_column: int
    content: str


@dataclass(frozen=True)
class Fix:
    """A suggested change; ``applicability`` says when ``--fix`` may apply it (ruff's convention).

    ``safe``: the edit keeps behaviour for every input, applied by ``--fix``.
    ``unsafe``: it may change behaviour (shown, applied only with ``--unsafe-fixes``).
    ``display``: shown, never applied.
    """

    message: str
    edits: tuple[Edit, ...]
    applicability: Applicability = "safe"

    def applies(self, unsafe: bool = False) -> bool:
        """Whether ``--fix`` applies it (``unsafe``: with ``--unsafe-fixes``)."""
        return self.applicability == "safe" or (unsafe and self.applicability == "unsafe")


@dataclass
class Finding:
    """A bug of the catalog seen at one place in the user's code.

    ``line`` and ``column`` are 1-based, counted in characters: the numbers an
    editor shows, and the same numbers every output format prints (ruff and
    flake8 print 1-based columns too; only ``ast`` and LSP count from 0).
    ``end_line``/``end_column`` point just past the flagged code. ``preview``
    marks a finding whose premises are not all proven: shown only with
    ``--preview``. ``step`` is set by the runtime checker (the optimizer step
    at which it was first seen) and ``count`` is how many times it was seen;
    the static checker leaves both at their defaults.
    """

    code: str
    message: str
    path: str
    line: int
    column: int = 1
    end_line: int | None = None
    end_column: int | None = None
    fix: Fix | None = None
    hint: str | None = None
    step: int | None = None
    count: int = 1
    extra: dict[str, Any] = field(default_factory=dict)
    preview: bool = False

    def __post_init__(self) -> None:
        if self.code not in CATALOG:
            raise ValueError(f"unknown bug code {self.code!r}")

    @property
    def name(self) -> str:
        return CATALOG[self.code].name

    @property
    def severity(self) -> str:
        """``error`` or ``warning``: advice (TW404, TW503, TW504) and preview findings are warnings."""
        return "warning" if self.preview else CATALOG[self.code].severity

    def location(self) -> str:
        return f"{self.path}:{self.line}:{self.column}"

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape shared by `trainwell check --format json` and `trainwell run --report`."""
        return {
            "code": self.code,
            "name": self.name,
            "message": self.message,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line if self.end_line is not None else self.line,
            "end_column": self.end_column if self.end_column is not None else self.column,
            "fix": _fix_dict(self.fix) if self.fix is not None else None,
            "hint": self.hint,
            "step": self.step,
            "count": self.count,
            "preview": self.preview,
            "severity": self.severity,
        }


def _fix_dict(fix: Fix) -> dict[str, Any]:
    """The fix with 1-based edit columns, as every printed location."""
    edits = [{**asdict(e), "column": e.column + 1, "end_column": e.end_column + 1} for e in fix.edits]
    return {"message": fix.message, "applicability": fix.applicability, "edits": edits}
