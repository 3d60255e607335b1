"""How trainwell writes to a terminal: live output and colour only where a person reads.

A stream that is not a terminal (a log file, a pipe, CI) gets plain lines and
no escape codes. Colour also honours ``NO_COLOR`` (https://no-color.org: set
and not empty means no colour) and ``TERM=dumb``. Pure Python: importing this
costs nothing.
"""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO

_CODES = {"red": "31", "yellow": "33", "green": "32", "bold": "1", "dim": "2"}


def is_terminal(stream: Any) -> bool:
    """True when ``stream`` is an interactive terminal (False for files, pipes, captures)."""
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (ValueError, OSError):  # a closed stream
        return False


def colour_allowed(stream: Any) -> bool:
    """Colour only in a terminal, and never under NO_COLOR or TERM=dumb."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return is_terminal(stream)


def paint(text: str, style: str, stream: TextIO | None = None) -> str:
    """``text`` in ``style`` (red, yellow, green, bold, dim) when ``stream`` allows colour."""
    if not colour_allowed(stream if stream is not None else sys.stderr):
        return text
    return f"\033[{_CODES[style]}m{text}\033[0m"
