"""``# noqa`` comments: on the reported line, bare (every code) or with codes
(``# noqa: TW101, TW204``); or for a whole file, on a line of its own
(``# trainwell: noqa: TW101 -- the reason``, as ruff's ``# ruff: noqa``).
Anything after the codes is free text: say why."""

from __future__ import annotations

import re
from typing import Sequence

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]+(?:\s*,?\s*[A-Za-z]+[0-9]+)*))?", re.IGNORECASE)
_FILE_NOQA = re.compile(r"^\s*#\s*trainwell:\s*(?P<noqa>noqa.*)$", re.IGNORECASE)


def suppressed(lines: Sequence[str], line: int, code: str) -> bool:
    """Whether a finding of ``code`` at ``line`` (1-based) of a file of ``lines`` is silenced by a noqa comment."""
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    if _covers(text, code):
        return True
    return any(match and _covers("# " + match.group("noqa"), code) for match in (_FILE_NOQA.match(t) for t in lines if "trainwell:" in t))


def _covers(text: str, code: str) -> bool:
    """Whether ``text`` carries a noqa comment that covers ``code``."""
    if "noqa" not in text.lower():
        return False
    for match in _NOQA.finditer(text):
        codes = match.group("codes")
        if codes is None:
            return True
        if code.upper() in {c.upper() for c in re.split(r"[\s,]+", codes) if c}:
            return True
    return False
