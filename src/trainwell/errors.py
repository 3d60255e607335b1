"""The errors users see: a single line that says what, where and how to fix.

A mistake in the user's input is a ``TrainwellError`` (one line). An exception
raised inside the user's own code (their model's forward, their factory) is
shown with the user's frames only, each once, never the frames of trainwell,
PyTorch or the standard library in between: ``describe_user_error``.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Iterable
from pathlib import Path


class TrainwellError(Exception):
    """A mistake in the user's input or setup, reported as one line.

    The CLI prints ``trainwell: error: <message>`` and exits with ``exit_code``
    (2 for usage and configuration mistakes, 1 for failures during a run).
    """

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def _library_roots() -> tuple[str, ...]:
    """Folders whose code is not the user's: trainwell, the standard library, installed packages."""
    import site
    import sysconfig

    paths = sysconfig.get_paths()
    roots = {str(Path(__file__).resolve().parent)}
    roots.update(paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib") if key in paths)
    try:
        roots.add(site.getusersitepackages())
    except AttributeError:  # site without user packages (embedded interpreters)
        pass
    return tuple(os.path.realpath(root) + os.sep for root in roots)


def is_user_file(filename: str) -> bool:
    """True for a real source file outside trainwell, the standard library and site-packages."""
    if filename.startswith("<"):  # <frozen ...>, <string>, <stdin>
        return False
    path = os.path.realpath(filename)
    return not path.startswith(_library_roots())


def user_frames(error: BaseException) -> list[traceback.FrameSummary]:
    """The frames of ``error``'s traceback that are the user's code, outermost first
    (with those of a traceback carried as text, as a DataLoader worker's error is)."""
    import re

    frames = list(traceback.extract_tb(error.__traceback__))
    text = str(error)
    for match in re.finditer(r'File "([^"]+)", line (\d+), in (\S+)\n\s*(.*)', text):
        frames.append(traceback.FrameSummary(match.group(1), int(match.group(2)),
                                             match.group(3), line=match.group(4)))
    return [frame for frame in frames if is_user_file(frame.filename)]


def first_line(error: BaseException) -> str:
    """``Type: first line of the message`` (PyTorch messages can run to many lines).

    An error re-raised from a DataLoader worker carries the worker's traceback
    as text: its last line is the original error.
    """
    text = [line for line in str(error).strip().splitlines() if line.strip()]
    if not text:
        return type(error).__name__
    if text[0].startswith("Caught ") and "Original Traceback" in str(error):
        return f"{text[0].rstrip('.')}: {text[-1].strip()}"
    return f"{type(error).__name__}: {text[0]}"


def describe_user_error(error: BaseException, what: str, context: Iterable[str] = ()) -> str:
    """``what raised Type: message``, then one line per user frame, then ``context`` lines."""
    lines = [f"{what} raised {first_line(error)}"]
    for frame in user_frames(error):
        code = f": {frame.line.strip()}" if frame.line else ""
        lines.append(f"  {_short(frame.filename)}:{frame.lineno} in {frame.name}{code}")
    lines.extend(f"  {line}" for line in context)
    return "\n".join(lines)


def _short(filename: str) -> str:
    """A path relative to the current directory when it lies below it."""
    try:
        return os.path.relpath(filename) if not os.path.relpath(filename).startswith("..") \
            else filename
    except ValueError:  # another drive (Windows)
        return filename


class UserCodeError(TrainwellError):
    """The user's own code raised: the message is already the short summary (exit code 1)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, exit_code=1)


def internal_error(error: BaseException) -> str:
    """One line for an exception trainwell did not expect, and how to see all of it."""
    frames = traceback.extract_tb(error.__traceback__)
    where = f" (at {Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
    return (f"internal error: {first_line(error)}{where}; rerun with --debug for the "
            "traceback, and please report it")


def interface_words(message: str, names: Iterable[str]) -> str:
    """A Python-API message in command-line words: ``stop_at=7`` becomes ``--stop-at 7``.

    Only ``name=value`` where ``name`` is one of ``names`` and the value is a
    literal (quoted text, a number, True/False/None) is rewritten.
    """
    import re

    pattern = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    if not pattern:
        return message

    def flag(match: re.Match[str]) -> str:
        value = match.group(2)
        if value[:1] in "'\"":
            value = value[1:-1]
        return f"--{match.group(1).replace('_', '-')} {value}"

    literal = r"('[^']*'|\"[^\"]*\"|-?\d[\w.+-]*|True|False|None)"
    return re.sub(rf"(?<![\w.-])({pattern})={literal}", flag, message)
