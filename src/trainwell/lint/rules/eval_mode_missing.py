"""TW202: validation or inference forward passes of a model with Dropout or BatchNorm in training mode."""

from __future__ import annotations

from typing import Iterator

from trainwell.lint import events as ev
from trainwell.lint.context import FileContext
from trainwell.lint.loops import validation_forward
from trainwell.diagnostic import Finding

CODE = "TW202"
# Precision: a forward pass counts as validation/inference here only under no_grad / inference_mode.
# Elsewhere (an RL rollout, a forward whose output is backpropagated in another function) training
# mode may be intended.


def check(ctx: FileContext) -> Iterator[Finding]:
    analysis = ctx.analysis
    evals = [e for e in analysis.events if e.kind == ev.EVAL]
    for forward in (e for e in analysis.events if validation_forward(e)):
        if forward.grad is not False or not ctx.has_mode_layers(forward.key):
            continue
        never_eval = not any(analysis.same(e.key, forward.key) or (forward.key or "").startswith((e.key or "?") + ".")
                             or (e.key or "").startswith((forward.key or "?") + ".") for e in evals)
        definitely_train = forward.mode == frozenset({"train"})
        if not (definitely_train or (never_eval and not any(isinstance(v, tuple) for v in forward.mode))):
            continue
        yield ctx.finding(
            CODE, forward.node,
            f"`{ctx.snippet(forward.node)}` runs `{forward.key}` for validation/inference while it is in training mode: "
            "Dropout still drops and BatchNorm uses (and updates) batch statistics, so the results are noisy and wrong.",
            f"Call `{forward.key}.eval()` before validation or inference, and `{forward.key}.train()` before training resumes.",
        )
