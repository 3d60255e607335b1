"""Read a Python file as Python does (PEP 263 encoding cookie, BOM), and say where it cannot be read.

A byte that does not decode is reported at its own line and column (1-based,
in characters), so the user can go to it; a bad encoding declaration at the
line that declares it.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")


class ReadError(SyntaxError):
    """A file that is not text in its declared encoding, at the place that shows it (a SyntaxError, as Python says)."""

    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message, (None, line, column, None))
        self.message, self.line, self.column = message, line, column


def decode(data: bytes) -> str:
    """The text of a Python file's bytes; ReadError with a location when they do not decode."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:  # an unknown encoding, or undecodable bytes in the first two lines
        _raise_undecodable(data, "utf-8")
        line = next((n for n, text in enumerate(data.splitlines()[:2], 1) if _COOKIE.match(text)), 1)
        raise ReadError(f"cannot read: {error.msg if hasattr(error, 'msg') else error}", line) from None
    return _raise_undecodable(data, encoding)


def write(path: Path, text: str) -> None:
    """Replace a Python file's text, in the encoding it declares (BOM and line endings as the text has them)."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(path.read_bytes()).readline)
    path.write_bytes(text.encode(encoding))


def read(path: Path) -> tuple[bytes, str]:
    """The file's bytes and its text. OSError when it cannot be opened, ReadError when it does not decode."""
    data = path.read_bytes()
    return data, decode(data)


def _raise_undecodable(data: bytes, encoding: str) -> str:
    """The decoded text; ReadError at the first byte that does not decode."""
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as error:
        start = error.start
        line_start = data.rfind(b"\n", 0, start) + 1
        line = data.count(b"\n", 0, start) + 1
        column = len(data[line_start:start].decode(encoding, errors="replace")) + 1
        raise ReadError(f"cannot read: byte {data[start:start + 1]!r} is not valid {error.encoding}; "
                        f"save the file as {error.encoding} or declare its encoding (PEP 263)", line, column) from None
