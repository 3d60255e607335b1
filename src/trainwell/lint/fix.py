"""Apply fixes as text edits at ast positions, so formatting and comments stay as they were.

Only fixes of the allowed applicability are applied (``safe``; ``unsafe`` too
when asked); ``display`` fixes are never applied. Overlapping fixes: the first
wins, the others wait for the next run. An edit that would leave the file
unparsable is dropped.
"""

from __future__ import annotations

import ast
import difflib
from typing import Callable, Iterable

from trainwell.diagnostic import Finding


def applicable(finding: Finding, unsafe: bool = False) -> bool:
    return finding.fix is not None and finding.fix.applies(unsafe)


def apply_fixes(source: str, findings: Iterable[Finding], unsafe: bool = False,
                parse: Callable[[str], object] = ast.parse) -> tuple[str, int]:
    """The fixed text and how many fixes went in; ``parse`` says whether the fixed text still parses (a notebook cell's way)."""
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))

    def offset(line: int, column: int) -> int:
        return starts[min(line - 1, len(starts) - 1)] + column

    chosen: list[tuple[int, int, str]] = []
    count = 0
    for finding in sorted(findings, key=lambda f: (f.line, f.column)):
        if not applicable(finding, unsafe):
            continue
        spans = [(offset(e.line, e.column), offset(e.end_line, e.end_column), e.content) for e in finding.fix.edits]  # type: ignore[union-attr]
        if any(s < ce and cs < e or (s == e == cs == ce) for s, e, _ in spans for cs, ce, _ in chosen):
            continue
        chosen.extend(spans)
        count += 1
    if not count:
        return source, 0
    text = source
    for start, end, content in sorted(chosen, key=lambda s: (s[0], s[1]), reverse=True):
        text = text[:start] + content + text[end:]
    try:
        parse(text)
    except (SyntaxError, ValueError):
        return source, 0
    return text, count


def unified_diff(path: str, before: str, after: str) -> str:
    return "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True), path, path))
