"""Who keeps a past step's graph alive, and on which line it is written.

Used once, when a kept graph is found: the user's frames on the stack (their
variables, the attributes of ``self``, the script's globals) are searched for
a tensor or container whose graph reaches the kept node; then, for one
iteration, a line tracer on the user's frames notes the line after which
that holder changed. The tracer is removed as soon as the line is known, and
is not installed when another tracer (a debugger, coverage) is active.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

import torch

from trainwell.runtime.location import Location, is_user_code

_MAX_NODES = 2000
_MAX_ITEMS = 64


class Holder:
    """A named place that holds a graph: ``describe`` for messages, ``signature`` to see it change."""

    def __init__(self, name: str, read: Callable[[], Any]) -> None:
        self.name, self.read = name, read

    @property
    def value(self) -> Any:
        try:
            return self.read()
        except Exception:  # noqa: BLE001 - the variable may be gone
            return None

    def is_state_tensor(self) -> bool:
        """A persistent non-scalar tensor (running statistic, memory bank), not a loss total or a list."""
        value = self.value
        return isinstance(value, torch.Tensor) and value.numel() > 1

    def signature(self) -> tuple[int, int]:
        value = self.value
        if isinstance(value, torch.Tensor):
            return id(value), value._version
        if isinstance(value, (list, dict)):
            return id(value), len(value)
        return id(value), 0


def _reaches(tensor: Any, is_kept: Callable[[Any], bool]) -> bool:
    node = getattr(tensor, "grad_fn", None) if isinstance(tensor, torch.Tensor) else None
    stack, seen = [node], set()
    while stack and len(seen) < _MAX_NODES:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if is_kept(node):
            return True
        stack.extend(child for child, _ in node.next_functions)
    return False


def _holds(value: Any, is_kept: Callable[[Any], bool]) -> bool:
    if isinstance(value, torch.Tensor):
        return _reaches(value, is_kept)
    if isinstance(value, (list, tuple)):
        return any(_reaches(item, is_kept) for item in list(value)[-_MAX_ITEMS:])
    if isinstance(value, dict):
        return any(_reaches(item, is_kept) for item in list(value.values())[-_MAX_ITEMS:])
    return False


def find_holder(is_kept: Callable[[Any], bool]) -> Holder | None:
    """The first variable (innermost user frame first) whose graph reaches a node ``is_kept`` accepts."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if is_user_code(frame.f_code):
            found = _in_frame(frame, is_kept)
            if found is not None:
                return found
        frame = frame.f_back
    return None


def _in_frame(frame: FrameType, is_kept: Callable[[Any], bool]) -> Holder | None:
    variables = frame.f_locals
    for name, value in list(variables.items()):
        if _holds(value, is_kept):
            return Holder(name, lambda f=frame, n=name: f.f_locals[n] if n in f.f_locals else f.f_globals[n])
    owner = variables.get("self")
    if owner is not None and hasattr(owner, "__dict__") and not isinstance(owner, torch.nn.Module):
        for name, value in list(vars(owner).items()):
            if _holds(value, is_kept):
                return Holder(f"self.{name}", lambda o=owner, n=name: getattr(o, n))
    return None


class LineFinder:
    """For one iteration, trace the user's lines and note the one after which ``holder`` changed."""

    def __init__(self, holder: Holder) -> None:
        self.holder = holder
        self.before = holder.signature()
        self.last_line: Location | None = None
        self.found: Location | None = None
        self.frames: list[FrameType] = []
        self.active = False

    def start(self) -> bool:
        if sys.gettrace() is not None:
            return False  # a debugger or coverage owns tracing
        frame = sys._getframe(1)
        while frame is not None:
            if is_user_code(frame.f_code):
                frame.f_trace = self._local
                self.frames.append(frame)
            frame = frame.f_back
        sys.settrace(self._global)
        self.active = True
        return True

    def stop(self) -> None:
        if self.active and sys.gettrace() == self._global:
            sys.settrace(None)
        for frame in self.frames:
            frame.f_trace = None
        self.frames = []
        self.active = False

    def _global(self, frame: FrameType, event: str, arg: Any) -> Any:
        return self._local if is_user_code(frame.f_code) else None

    def _local(self, frame: FrameType, event: str, arg: Any) -> Any:
        if self.found is None and event in ("line", "return"):
            if self.last_line is not None and self.holder.signature() != self.before:
                self.found = self.last_line
            elif event == "line":
                self.last_line = (frame.f_code.co_filename, frame.f_lineno)
        return self._local
