"""TW103: gradient clipping before backward() (clips nothing) or after step() (too late)."""

from __future__ import annotations

from typing import Iterator

from trainwell.lint import events as ev
from trainwell.lint.context import FileContext
from trainwell.lint.moves import move
from trainwell.lint.rules import TRAINING
from trainwell.diagnostic import Finding

CODE = "TW103"
REQUIRES = TRAINING


def check(ctx: FileContext) -> Iterator[Finding]:
    analysis = ctx.analysis
    for clip in (e for e in analysis.events if e.kind == ev.CLIP):
        frame = analysis.enclosing(clip, (ev.STEP,))
        if frame is None:
            continue
        events = [e for e in frame.events if e.compatible(clip)]
        backs = [e for e in events if e.kind == ev.BACKWARD]
        steps = [e for e in events if e.kind == ev.STEP]
        later_backs = [b for b in backs if b.seq > clip.seq]
        if later_backs and not any(b.seq < clip.seq for b in backs) and any(s.seq > later_backs[0].seq for s in steps):
            back = later_backs[0]
            step = next(s for s in steps if s.seq > back.seq)
            # moving the clip after backward() is the fix only where each backward is followed by the step; under
            # gradient accumulation (`if (i + 1) % k == 0: optimizer.step()`) it would clip every partial sum instead
            fix = move(ctx, clip.node, back.node, True, "move the clip after backward()") if _every_time(clip, step) else None
            yield ctx.finding(
                CODE, clip.node,
                f"`{ctx.snippet(clip.node)}` runs before `{ctx.snippet(back.node)}` (line {back.line}): it clips the previous "
                "gradients (or none) and the step uses this batch's gradients unclipped.",
                "Clip after backward() and before the optimizer step.",
                fix,
            )
            continue
        earlier = [s for s in steps if s.seq < clip.seq]
        if earlier and not any(s.seq > clip.seq for s in steps) and any(b.seq < earlier[-1].seq for b in backs):
            step = earlier[-1]
            if any(step.seq < b.seq < clip.seq for b in backs):
                continue
            yield ctx.finding(
                CODE, clip.node,
                f"`{ctx.snippet(clip.node)}` runs after `{ctx.snippet(step.node)}` (line {step.line}): the step already used "
                "the unclipped gradients, so clipping changes nothing.",
                "Clip after backward() and before the optimizer step.",
                move(ctx, clip.node, step.node, False, "move the clip before the optimizer step"),
            )


def _every_time(clip: ev.Event, step: ev.Event) -> bool:
    """Whether ``step`` runs in every iteration where ``clip`` runs: it sits in no ``if`` branch the clip is not in."""
    return set(step.conds) <= set(clip.conds) and set(map(id, step.periodic)) <= set(map(id, clip.periodic))
