"""The user's own source line: the first stack frame outside torch, trainwell
and the standard library.

A finding is only useful at the line the user wrote, never inside a library
frame. Classifying a code object is cached, so a walk costs a few dict
lookups per frame (keyed by file name).
"""

from __future__ import annotations

import os
import sys
import sysconfig
from types import CodeType, FrameType, TracebackType

import torch

import trainwell


def _root(path: str) -> str:
    return os.path.normcase(os.path.abspath(path)) + os.sep


_PATHS = sysconfig.get_paths()
_LIBRARY_ROOTS = tuple(_root(os.path.dirname(p)) for p in (torch.__file__, trainwell.__file__))
_STDLIB_ROOTS = tuple({_root(_PATHS["stdlib"]), _root(_PATHS["platstdlib"])})
# site-packages sits inside the stdlib folder: third-party code there is not stdlib
_THIRD_PARTY_ROOTS = tuple({_root(_PATHS["purelib"]), _root(_PATHS["platlib"])})
_CHECKER_ROOT = _root(os.path.dirname(os.path.abspath(__file__)))  # trainwell/runtime: the watcher's own frames
_is_user_cache: dict[str, bool] = {}  # by file name: a str caches its hash, a code object does not

Location = tuple[str, int]


def is_user_code(code: CodeType) -> bool:
    """Whether ``code`` belongs to the user (not torch, trainwell or the standard library)."""
    filename = code.co_filename
    known = _is_user_cache.get(filename)
    if known is None:
        if filename.startswith("<") and filename != "<stdin>" and not filename.startswith("<ipython"):
            known = False  # frozen importlib, <string> from the library
        else:
            path = os.path.normcase(os.path.abspath(filename))
            library = path.startswith(_LIBRARY_ROOTS)
            stdlib = path.startswith(_STDLIB_ROOTS) and not path.startswith(_THIRD_PARTY_ROOTS)
            known = not (library or stdlib)
        _is_user_cache[filename] = known
    return known


def user_location(depth: int = 1) -> Location | None:
    """``(path, line)`` of the innermost user frame, ``depth`` frames up from here or above
    (1: the caller, a probe, whose own frame is not user code), or None if there is none."""
    frame: FrameType | None = sys._getframe(depth)
    while frame is not None:
        code = frame.f_code
        known = _is_user_cache.get(code.co_filename)
        if known is None:
            known = is_user_code(code)
        if known:
            return code.co_filename, frame.f_lineno
        frame = frame.f_back
    return None


def caller_location(depth: int) -> Location | None:
    """Like ``user_location``, but first tries the frame exactly ``depth`` frames up (the
    caller of a hook, on a hot path), walking up only when that one is library code."""
    frame = sys._getframe(depth)
    code = frame.f_code
    if _is_user_cache.get(code.co_filename):
        return code.co_filename, frame.f_lineno
    return user_location(depth + 1)


def traceback_user_frame(tb: TracebackType | None) -> tuple[FrameType, int] | None:
    """The user frame of a traceback where the failing call was made: the one that
    called the outermost ``nn.Module`` (the forward call), else the innermost user frame."""
    found = None
    while tb is not None:
        code = tb.tb_frame.f_code
        if is_user_code(code):
            found = (tb.tb_frame, tb.tb_lineno)
        elif found is not None and code.co_name == "_wrapped_call_impl":
            return found
        tb = tb.tb_next
    return found


def trim_to_user(error: BaseException) -> None:
    """Drop the leading library frames (runpy, trainwell) of ``error``'s traceback and its causes,
    so it prints as python would print it for the script."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        tb = error.__traceback__
        while tb is not None and not is_user_code(tb.tb_frame.f_code):
            tb = tb.tb_next
        if tb is not None:
            error.__traceback__ = tb
        error = error.__cause__ or error.__context__  # type: ignore[assignment]


def hide_checker_frames(error: BaseException) -> None:
    """Unlink the watcher's own frames (its wrappers around torch calls) from ``error``'s
    traceback and those of its causes, so it prints as it would without the watcher."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        head = _skip_checker(current.__traceback__)
        tb = head
        while tb is not None:
            tb.tb_next = _skip_checker(tb.tb_next)
            tb = tb.tb_next
        if head is not current.__traceback__:
            current.__traceback__ = head
        current = current.__cause__ or current.__context__


def _skip_checker(tb: TracebackType | None) -> TracebackType | None:
    while tb is not None and os.path.normcase(os.path.abspath(tb.tb_frame.f_code.co_filename)).startswith(_CHECKER_ROOT):
        tb = tb.tb_next
    return tb
