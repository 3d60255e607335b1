"""Questions the rules ask about the loop model: which loops hold training steps, and which forward passes are
evaluation rather than training.

Mixed into :class:`trainwell.lint.loops.Analysis` (the loops' frames), plus
functions of one event.
"""

from __future__ import annotations

from functools import cached_property

from trainwell.lint import events as ev
from trainwell.lint.events import Event, Frame


class Queries:
    """Step loops and enclosing frames, over the frames the walk recorded."""

    frames: list[Frame]

    @cached_property
    def step_frames(self) -> list[Frame]:
        """Innermost loops whose iteration holds both a backward() and an optimizer step."""
        both = [f for f in self.frames if f.kind == "loop" and f.has(ev.BACKWARD) and f.has(ev.STEP)]
        return [f for f in both if not any(c in both for c in self._descendants(f))]

    def _descendants(self, frame: Frame) -> list[Frame]:
        out, todo = [], list(frame.children)
        while todo:
            child = todo.pop()
            out.append(child)
            todo.extend(child.children)
        return out

    def enclosing(self, event: Event, kinds: tuple[str, ...]) -> Frame | None:
        """The innermost frame around ``event`` that holds an event of one of ``kinds`` (climbing out of helper loops such as `for p in params`)."""
        frame = event.frame
        while frame is not None and not any(e.kind in kinds for e in frame.events):
            frame = frame.parent
        return frame


def periodic_ids(event: Event) -> set[int]:
    return {id(node) for node in event.periodic}


def extra_conditions(event: Event, other: Event) -> list[tuple[int, bool]]:
    """Conditions ``event`` sits under that ``other`` does not share."""
    return [c for c in event.conds if c not in other.conds]


def _backward_after(event: Event) -> bool:
    """Whether a backward() follows ``event`` in its iteration or in any enclosing one."""
    frame = event.frame
    while frame is not None:
        if any(b.kind == ev.BACKWARD and b.seq > event.seq and b.grad is not False for b in frame.events):
            return True
        frame = frame.parent
    return False


def validation_forward(event: Event) -> bool:
    """A forward pass whose output no later backward() can use: under no_grad, in a function no graph leaves,
    or with no backward after it."""
    return event.kind == ev.FORWARD and (event.grad is False or event.sealed or not _backward_after(event))


def training_forward(event: Event) -> bool:
    return event.kind == ev.FORWARD and not validation_forward(event)


def autograd_on(event: Event) -> bool:
    """Whether autograd is on at ``event``: on by default (``grad`` True), or in an entry point whose callers the
    analysis cannot see (``grad`` None) that calls ``backward()`` at that same level on every path to ``event``:
    no caller can have turned autograd off there, or that backward() would raise."""
    if event.grad is True:
        return True
    if event.grad is not None:
        return False
    entry = event.frame
    while entry is not None and entry.parent is not None:
        entry = entry.parent
    conds = set(event.conds)
    return entry is not None and any(b.kind == ev.BACKWARD and b.grad is None and set(b.conds) <= conds for b in entry.events)
