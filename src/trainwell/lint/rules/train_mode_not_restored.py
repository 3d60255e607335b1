"""TW201: model.eval() inside the epoch loop and no model.train() before training resumes."""

from __future__ import annotations

from typing import Iterator

from trainwell.lint import events as ev
from trainwell.lint.context import FileContext
from trainwell.lint.iteration import training_forward, validation_forward
from trainwell.lint.rules import TRAINING
from trainwell.diagnostic import Finding

CODE = "TW201"
REQUIRES = TRAINING


def check(ctx: FileContext) -> Iterator[Finding]:
    analysis = ctx.analysis
    trained = set()
    for key, role in ctx.roles.items():
        if role.kind == "optimizer":
            trained |= analysis.optimizer_models(key)
    for_validation = {id(v[1]) for e in analysis.events if validation_forward(e) for v in e.mode if isinstance(v, tuple)}
    for_validation -= _for_training(ctx)
    for forward in (e for e in analysis.events if training_forward(e)):
        if not ctx.has_mode_layers(forward.key):
            continue  # no Dropout or BatchNorm we know of: the mode changes nothing
        if trained and not any(analysis.same(forward.key, m) or (forward.key or "").startswith(m + ".") for m in trained):
            continue  # a frozen teacher or an EMA copy may stay in eval mode on purpose
        for value in forward.mode:
            if isinstance(value, tuple) and id(value[1]) in for_validation:  # an eval() made for validation
                node = value[1]
                yield ctx.finding(
                    CODE, node,
                    f"`{ctx.snippet(node)}` switches `{forward.key}` to eval mode and nothing switches it back before the next "
                    f"training forward pass (`{ctx.snippet(forward.node)}`, line {forward.line}): Dropout stays off and "
                    "BatchNorm stops learning for the rest of training.",
                    f"Call `{forward.key}.train()` at the start of each training epoch (or right after validation).",
                )


def _for_training(ctx: FileContext) -> set[int]:
    """The `.eval()` calls whose next forward pass of that model is a training one: a mode chosen for training (a
    frozen backbone's BatchNorm), not one made for validation, even when a validation pass later runs in it too."""
    analysis = ctx.analysis
    found = set()
    for switch in (e for e in analysis.events if e.kind == ev.EVAL):
        later = [f for f in analysis.events if f.kind == ev.FORWARD and f.seq > switch.seq and analysis.same(f.key, switch.key)
                 and any(isinstance(v, tuple) and v[1] is switch.node for v in f.mode)]
        if later and training_forward(min(later, key=lambda f: f.seq)):
            found.add(id(switch.node))
    return found
