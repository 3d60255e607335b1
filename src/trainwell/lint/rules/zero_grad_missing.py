"""TW101: gradients are never cleared inside the training loop."""

from __future__ import annotations

from typing import Iterator

from trainwell.lint import events as ev
from trainwell.lint.context import FileContext
from trainwell.lint.rules import TRAINING
from trainwell.diagnostic import Finding

CODE = "TW101"
REQUIRES = TRAINING


def check(ctx: FileContext) -> Iterator[Finding]:
    analysis = ctx.analysis
    for frame in analysis.step_frames:
        if frame.of(ev.ESCAPE):
            continue  # the optimizer or model goes into code we cannot see: it may clear them there
        zeros = frame.of(ev.ZERO_GRAD)
        backwards = [b for b in frame.of(ev.BACKWARD) if b.grad is not False]
        for step in frame.of(ev.STEP):
            if step.key is None or any(analysis.zeroes(z.key, step.key) for z in zeros):
                continue
            before = [b for b in backwards if b.seq < step.seq] or backwards
            if not before:
                continue
            backward = before[-1]
            opt = ctx.snippet(step.node) if step.via != "scaler" else f"{step.key}.step() (through the scaler)"
            yield ctx.finding(
                CODE, backward.node,
                f"`{ctx.snippet(backward.node)}` adds onto the gradients of every earlier batch: `{step.key}` is never "
                f"cleared inside this loop (line {frame.node.lineno}), so `{opt}` at line {step.line} applies their sum.",
                f"Call `{step.key}.zero_grad()` once per optimizer step, before `backward()` (or right after the step).",
            )
