"""``# noqa`` comments: on the reported line, bare (every code) or with codes
(``# noqa: TW101, TW204``), or trainwell's own ``# trainwell: noqa: TW101``
there, which other tools leave alone; or for a whole file, on a line of its
own (``# trainwell: noqa: TW101 -- the reason``, as ruff's ``# ruff: noqa``).
Anything after the codes is free text: say why. A code that is no catalog
code, in trainwell's own form or a ``TW`` code in ``# noqa:``, is reported
(ruff's RUF102): it silences nothing."""

from __future__ import annotations

import re
import tokenize
from typing import Iterator, Sequence

from trainwell.catalog import CATALOG

_NOQA = re.compile(r"#\s*(?P<own>trainwell:\s*)?noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]+(?:\s*,?\s*[A-Za-z]+[0-9]+)*))?", re.IGNORECASE)
_FILE_NOQA = re.compile(r"^\s*#\s*trainwell:\s*(?P<noqa>noqa.*)$", re.IGNORECASE)


def suppressed(lines: Sequence[str], line: int, code: str) -> bool:
    """Whether a finding of ``code`` at ``line`` (1-based) of a file of ``lines`` is silenced by a noqa comment."""
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    if _covers(text, code):
        return True
    return any(_covers(comment, code) for comment in _file_comments(lines))


_last: list = [None, ()]  # the lines last asked about, and their whole-file comments: a file's findings come together


def _file_comments(lines: Sequence[str]) -> tuple[str, ...]:
    """The file's ``# trainwell: noqa...`` lines, as noqa comments; read once per file, not once per finding."""
    if _last[0] is not lines:
        matches = (_FILE_NOQA.match(t) for t in lines if "trainwell:" in t)
        _last[:] = [lines, tuple("# " + match.group("noqa") for match in matches if match)]
    return _last[1]


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


def unknown_codes(lines: Sequence[str]) -> Iterator[tuple[int, int, str, str]]:
    """(line, column, code, comment) of each code a noqa comment names that the catalog lacks (1-based).

    Only trainwell's own ``# trainwell: noqa:`` and ``TW`` codes of ``# noqa:`` are trainwell's to judge:
    ``# noqa: E501`` belongs to another tool. Text in a string literal is no comment.
    """
    comments: dict[int, int] | None = None  # line -> column where its comment starts
    for number, text in enumerate(lines, 1):
        if "noqa" not in text.lower() or not _NOQA.search(text):
            continue
        if comments is None:
            comments = _comment_starts(lines)
        for match in _NOQA.finditer(text):
            if match.start() < comments.get(number, len(text)):
                continue
            codes = match.group("codes")
            if codes is None:
                continue
            start = match.start("codes")
            for code in re.finditer(r"[A-Za-z]+[0-9]+", codes):
                name = code.group(0).upper()
                if name not in CATALOG and (match.group("own") or name.startswith("TW")):
                    comment = "# trainwell: noqa" if match.group("own") else "# noqa"
                    yield number, start + code.start() + 1, name, comment


def _comment_starts(lines: Sequence[str]) -> dict[int, int]:
    """Where each line's comment starts, by the tokenizer (empty for a file that does not tokenize)."""
    starts: dict[int, int] = {}
    text = iter([line + "\n" for line in lines])
    try:
        for token in tokenize.generate_tokens(lambda: next(text, "")):
            if token.type == tokenize.COMMENT:
                starts[token.start[0]] = token.start[1]
    except (tokenize.TokenError, SyntaxError):
        pass
    return starts
