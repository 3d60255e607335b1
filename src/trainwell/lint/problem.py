"""What stopped a file (or one rule on it) from being checked: reported next to the findings, and cached with them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Problem:
    """Something that stopped a file (or one rule on it) from being checked."""

    kind: str  # "syntax-error" | "internal-error" | "read-error"
    path: str
    message: str
    line: int = 1
    column: int = 1  # 1-based, as Finding's
    rule: str | None = None
    cell: int | None = None  # in a notebook: the cell (1-based), and ``line`` is the line in it
