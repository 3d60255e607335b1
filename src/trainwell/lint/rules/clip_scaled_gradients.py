"""TW104: clipping with an enabled GradScaler without unscale_ first."""

from __future__ import annotations

from typing import Iterator

from trainwell.lint import events as ev
from trainwell.lint.context import FileContext
from trainwell.lint.rules import TRAINING
from trainwell.diagnostic import Finding

CODE = "TW104"
REQUIRES = TRAINING


def check(ctx: FileContext) -> Iterator[Finding]:
    analysis = ctx.analysis
    for clip in (e for e in analysis.events if e.kind == ev.CLIP):
        frame = analysis.enclosing(clip, (ev.BACKWARD,))
        if frame is None:
            continue
        events = [e for e in frame.events if e.compatible(clip) and e.seq < clip.seq]
        scaled = [b for b in events if b.kind == ev.BACKWARD and b.via == "scaler"]
        if not scaled:
            continue
        back = scaled[-1]
        role = ctx.role(back.key)
        if role is not None and role.kind == "scaler" and not role.info.get("enabled", True):
            continue  # GradScaler(enabled=False) passes gradients through unscaled
        if any(e.kind == ev.UNSCALE and e.seq > back.seq for e in events):
            continue
        if any(e.kind == ev.BACKWARD and e.via is None and e.seq > back.seq for e in events):
            continue
        scaler = back.key or "scaler"
        yield ctx.finding(
            CODE, clip.node,
            f"`{ctx.snippet(clip.node)}` clips gradients that `{scaler}` scaled up (`{ctx.snippet(back.node)}`, line {back.line}): "
            "the threshold is compared with scaled norms, so it almost always clips, by the wrong amount.",
            f"Call `{scaler}.unscale_(optimizer)` right before clipping.",
        )
