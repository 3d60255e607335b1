"""TW106: a per-epoch schedule stepped inside the batch loop."""

from __future__ import annotations

from typing import Iterator

from trainwell.lint import events as ev
from trainwell.lint.context import FileContext
from trainwell.lint.loops import periodic_ids
from trainwell.lint.rules import TRAINING
from trainwell.diagnostic import Finding

CODE = "TW106"
REQUIRES = TRAINING


def check(ctx: FileContext) -> Iterator[Finding]:
    analysis = ctx.analysis
    for sched in (e for e in analysis.events if e.kind == ev.SCHED_STEP):
        role = ctx.role(sched.key)
        if role is None or role.info.get("per") != "epoch":
            continue
        frame = sched.frame
        if frame is None or frame.kind != "loop" or not any(b.frame is frame for b in frame.of(ev.BACKWARD)):
            continue  # not in the loop that runs backward() each batch
        if not _inside_another_loop(frame):
            continue  # the only loop: its iterations are the unit the schedule was sized in (an optimisation loop)
        if any(c[0] not in periodic_ids(sched) for c in sched.conds if not any(c in b.conds for b in frame.of(ev.BACKWARD))):
            continue  # guarded by a condition other than an accumulation window (e.g. `if last_batch:`)
        over = f"`{frame.iter_key}`" if frame.iter_key else f"the loop at line {frame.node.lineno}"
        times = f"len({frame.iter_key}) times" if frame.iter_key else "many times"
        yield ctx.finding(
            CODE, sched.node,
            f"`{ctx.snippet(sched.node)}` ({role.cls}, a per-epoch schedule) is called inside the batch loop over {over} "
            f"(line {frame.node.lineno}): the LR decays {times} too fast.",
            f"Move it after the loop over {over} (once per epoch), or size the schedule in steps (e.g. T_max=epochs * len(loader)).",
        )


def _inside_another_loop(frame) -> bool:
    """A batch loop runs inside an epoch loop; a single loop of optimisation steps has no epochs to decay by."""
    parent = frame.parent
    while parent is not None:
        if parent.kind == "loop":
            return True
        parent = parent.parent
    return False
