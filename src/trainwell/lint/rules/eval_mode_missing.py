"""TW202: validation or inference forward passes of a model with Dropout or BatchNorm in training mode."""

from __future__ import annotations

from typing import Iterator

from trainwell.lint import events as ev
from trainwell.lint.context import FileContext
from trainwell.lint.events import Event
from trainwell.lint.iteration import validation_forward
from trainwell.lint.rules import TRAINING
from trainwell.lint.rules._data import loader_calls
from trainwell.diagnostic import Finding

CODE = "TW202"
REQUIRES = TRAINING
# Precision: a forward pass counts as validation/inference here under no_grad / inference_mode, or with autograd
# on (TW203's pass, missing both `eval()` and `no_grad`) when it runs over the batches of a DataLoader. Elsewhere
# (an RL rollout over environment steps, a forward whose output is backpropagated in another function) training
# mode may be intended.


def check(ctx: FileContext) -> Iterator[Finding]:
    analysis = ctx.analysis
    if not any(e.kind == ev.STEP for e in analysis.events):
        return  # a program that never steps an optimizer is not a training run (tests, demos)
    for forward in (e for e in analysis.events if validation_forward(e)):
        if forward.grad is not False and not (forward.grad is True and _over_loader(ctx, forward)):
            continue
        if not ctx.has_mode_layers(forward.key):
            continue
        if (forward.frame is None or forward.frame.kind != "loop") and not any(e.kind == ev.STEP and e.seq < forward.seq for e in analysis.events):
            continue  # one pass before any training step: initialising lazy modules, a shape check; not validation
        if forward.mode != frozenset({"train"}):
            continue  # the mode must be known on every path: built here in train mode, or `.train()` called
        yield ctx.finding(
            CODE, forward.node,
            f"`{ctx.snippet(forward.node)}` runs `{forward.key}` for validation/inference while it is in training mode: "
            "Dropout still drops and BatchNorm uses (and updates) batch statistics, so the results are noisy and wrong.",
            f"Call `{forward.key}.eval()` before validation or inference, and `{forward.key}.train()` before training resumes.",
        )


def _over_loader(ctx: FileContext, forward: Event) -> bool:
    """Whether the forward runs in a loop over the batches of a DataLoader built in this file, a loop that steps no
    optimizer (a validation pass; a GAN's samples drawn inside its training loop are not one)."""
    frame = forward.frame
    while frame is not None and frame.kind == "loop":
        if frame.iter_key is not None and frame.iter_key in _loader_keys(ctx):
            return not frame.has(ev.STEP)
        frame = frame.parent
    return False


def _loader_keys(ctx: FileContext) -> set[str]:
    return {key for key, _ in loader_calls(ctx)}
