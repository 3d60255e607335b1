"""TW101: gradients are never cleared inside the training loop."""

from __future__ import annotations

import ast
import os
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
        escapes = frame.of(ev.ESCAPE)
        zeros = frame.of(ev.ZERO_GRAD)
        backwards = [b for b in frame.of(ev.BACKWARD) if b.grad is not False]
        for step in frame.of(ev.STEP):
            if step.key is None or any(analysis.zeroes(z.key, step.key) for z in zeros):
                continue
            if any(not _rarer(e, step) for e in escapes):
                continue  # the optimizer or model goes into code we cannot see wherever it steps: it may clear them there
            before = [b for b in backwards if b.seq < step.seq] or backwards
            if not before:
                continue
            backward = before[-1]
            opt = ctx.snippet(step.node) if step.via != "scaler" else f"{step.key}.step() (through the scaler)"
            here = ctx.home(backward.node)
            elsewhere = ctx.home(step.node) is not here
            name = step.key or "" if elsewhere else _as_written(ctx, step)
            where = f"line {step.line} of {_relative(here.path, ctx.home(step.node).path)}" if elsewhere else f"line {step.line}"
            yield ctx.finding(
                CODE, backward.node,
                f"`{ctx.snippet(backward.node)}` adds onto the gradients of every earlier batch: `{name}` is never "
                f"cleared inside this loop (line {frame.node.lineno}), so `{opt}` at {where} applies their sum.",
                f"Call `{name}.zero_grad()` once per optimizer step, before `backward()` (or right after the step).",
            )


def _as_written(ctx: FileContext, step: ev.Event) -> str:
    """The optimizer as the step's own line names it (``self.optimizer`` in a trainer method walked from the script
    that built ``trainer``), else its key."""
    node = step.node
    if step.via is None and isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "step":
        return ctx.snippet(node.func.value)
    return step.key or ""


def _rarer(escape: ev.Event, step: ev.Event) -> bool:
    """Whether ``escape`` sits in an ``if`` branch (``if step % k == 0:``, ``if fp16:``) that ``step`` is not in: some
    steps run without it, and what it may clear cannot clear the gradients of those."""
    return any(cond not in step.conds for cond in escape.conds)


def _relative(here: str, there: str) -> str:
    """``there`` as a path from the folder of ``here`` (the file the finding is in)."""
    return os.path.relpath(os.path.abspath(there), os.path.dirname(os.path.abspath(here)))
