"""TW203: validation or inference forward passes with autograd on."""

from __future__ import annotations

from typing import Iterator

from trainwell.lint import events as ev
from trainwell.lint.context import FileContext
from trainwell.lint.loops import validation_forward
from trainwell.diagnostic import Finding

CODE = "TW203"


def check(ctx: FileContext) -> Iterator[Finding]:
    analysis = ctx.analysis
    trains = any(e.kind == ev.BACKWARD for e in analysis.events)
    for forward in (e for e in analysis.events if validation_forward(e)):
        if forward.grad is not True:
            continue  # under no_grad / inference_mode, or a helper whose callers we cannot see
        in_eval = bool(forward.mode) and all(isinstance(v, tuple) for v in forward.mode)
        if not (trains or in_eval):
            continue  # a file that never trains nor switches to eval: not clearly validation
        yield ctx.finding(
            CODE, forward.node,
            f"`{ctx.snippet(forward.node)}` runs `{forward.key}` for validation/inference with autograd on: "
            "each call records a graph that is never used, wasting memory and time.",
            "Wrap validation in `with torch.no_grad():` (or `torch.inference_mode()`), or decorate the helper with `@torch.no_grad()`.",
        )
