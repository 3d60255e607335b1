"""TW102: zero_grad() between backward() and step(): the step applies nothing."""

from __future__ import annotations

from typing import Iterator

from trainwell.lint import events as ev
from trainwell.lint.context import FileContext
from trainwell.lint.moves import move
from trainwell.lint.rules import TRAINING
from trainwell.diagnostic import Finding

CODE = "TW102"
REQUIRES = TRAINING


def check(ctx: FileContext) -> Iterator[Finding]:
    analysis = ctx.analysis
    for zero in (e for e in analysis.events if e.kind == ev.ZERO_GRAD and e.via != ev.PER_TENSOR):
        frame = analysis.enclosing(zero, (ev.STEP, ev.BACKWARD))
        if frame is None:
            continue
        events = frame.events
        steps = [s for s in events if s.kind == ev.STEP and s.seq > zero.seq and s.compatible(zero) and analysis.zeroes(zero.key, s.key)]
        if not steps:
            continue
        step = steps[0]
        between = [e for e in events if zero.seq < e.seq < step.seq and e.kind == ev.BACKWARD]
        backwards = [b for b in events if b.kind == ev.BACKWARD and b.seq < zero.seq and b.compatible(zero) and b.compatible(step)]
        if between or not backwards:
            continue
        backward = backwards[-1]
        if any(s.kind == ev.STEP and backward.seq < s.seq < zero.seq and analysis.same(s.key, step.key) for s in events):
            continue
        what = ctx.snippet(zero.node).strip()
        yield ctx.finding(
            CODE, zero.node,
            f"`{what}` clears the gradients that `{ctx.snippet(backward.node)}` (line {backward.line}) just computed, "
            f"before `{step.key}.step()` at line {step.line} can use them: the step changes nothing.",
            "Clear gradients before backward() or after step(), never between them.",
            move(ctx, zero.node, step.node, True, f"move the clearing after `{step.key}.step()`"),
        )
