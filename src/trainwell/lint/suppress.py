"""``# noqa`` comments: bare (every code) or with codes (``# noqa: TW101, TW204``)."""

from __future__ import annotations

import re

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]+(?:\s*,?\s*[A-Za-z]+[0-9]+)*))?", re.IGNORECASE)


def suppressed(line_text: str, code: str) -> bool:
    """Whether ``line_text`` carries a noqa comment that covers ``code``."""
    if "noqa" not in line_text.lower():
        return False
    for match in _NOQA.finditer(line_text):
        codes = match.group("codes")
        if codes is None:
            return True
        if code.upper() in {c.upper() for c in re.split(r"[\s,]+", codes) if c}:
            return True
    return False
