"""TW105: scheduler.step() before optimizer.step() in the same iteration."""

from __future__ import annotations

import ast
from typing import Iterator

from trainwell.lint import events as ev
from trainwell.lint.context import FileContext, key_of
from trainwell.lint.iteration import extra_conditions, periodic_ids
from trainwell.lint.moves import move
from trainwell.lint.rules import TRAINING
from trainwell.diagnostic import Finding

CODE = "TW105"
REQUIRES = TRAINING


def check(ctx: FileContext) -> Iterator[Finding]:
    analysis = ctx.analysis
    for sched in (e for e in analysis.events if e.kind == ev.SCHED_STEP):
        frame = analysis.enclosing(sched, (ev.STEP,))
        if frame is None:
            continue
        role = ctx.role(sched.key)
        target = key_of(role.node.args[0]) if role is not None and isinstance(role.node, ast.Call) and role.node.args else None
        steps = [s for s in frame.events if s.kind == ev.STEP and s.compatible(sched)
                 and (target is None or s.key is None or analysis.same(s.key, target) or _aliased(sched, s, target))]
        if not steps or any(s.seq < sched.seq for s in steps):
            continue
        step = steps[0]
        if any(c[0] not in periodic_ids(sched) for c in extra_conditions(sched, step)):
            continue  # e.g. `if epoch > 0: scheduler.step()`: a deliberate guard
        yield ctx.finding(
            CODE, sched.node,
            f"`{ctx.snippet(sched.node)}` runs before `{ctx.snippet(step.node)}` (line {step.line}) in the same iteration: "
            "the schedule advances before its first value is used, so the first LR value is skipped.",
            "Call the scheduler's step() after the optimizer's step().",
            move(ctx, sched.node, step.node, True, "move the scheduler step after the optimizer step") if step.frame is sched.frame else None,
        )


def _aliased(sched: ev.Event, step: ev.Event, target: str) -> bool:
    """``self.scheduler = LambdaLR(self.optimizer, ...)`` and ``self.optimizer.step()``: compare the attribute names."""
    return step.key is not None and step.key.rsplit(".", 1)[-1] == target.rsplit(".", 1)[-1]
