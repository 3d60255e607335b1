"""TW203: validation or inference forward passes with autograd on."""

from __future__ import annotations

from typing import Iterator

from trainwell.lint import events as ev
from trainwell.lint.context import FileContext
from trainwell.lint.loops import validation_forward
from trainwell.lint.rules import TRAINING
from trainwell.diagnostic import Finding

CODE = "TW203"
REQUIRES = TRAINING


def check(ctx: FileContext) -> Iterator[Finding]:
    analysis = ctx.analysis
    if not any(e.kind == ev.STEP for e in analysis.events):
        return  # a program that never steps an optimizer is not a training run (demo code, tests, tutorials' one-offs)
    for forward in (e for e in analysis.events if validation_forward(e)):
        if forward.grad is not True:
            continue  # under no_grad / inference_mode / enable_grad on purpose, or a helper whose callers we cannot see
        # One forward pass in a script's straight-line code (a plot, a print after training) is not repeated:
        # its graph costs one batch once. Shown with --preview only.
        once = (forward.frame is None or forward.frame.kind != "loop") and forward.scope is ctx.tree
        yield ctx.finding(
            CODE, forward.node,
            f"`{ctx.snippet(forward.node)}` runs `{forward.key}` for validation/inference with autograd on: "
            "each call records a graph that is never used, wasting memory and time.",
            "Wrap validation in `with torch.no_grad():` (or `torch.inference_mode()`), or decorate the helper with `@torch.no_grad()`.",
            preview=once,
        )
