"""TW201: model.eval() inside the epoch loop and no model.train() before training resumes."""

from __future__ import annotations

import ast
from typing import Iterator

from trainwell.lint import events as ev
from trainwell.lint.context import FileContext
from trainwell.lint.iteration import exclusive, implied, training_forward, validation_forward
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
            if isinstance(value, tuple) and id(value[1]) in for_validation and not _restored_first(analysis, forward, value[1]):
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


def _restored_first(analysis, forward: ev.Event, node: object) -> bool:
    """Whether the ``.eval()`` ``node`` reaches ``forward`` only through a ``.train()`` of the model: in the loop that
    carries it there (the innermost around both), a ``.train()`` runs before ``forward`` in every iteration where
    ``forward`` runs (each branch it sits in is implied by the forward's own tests on a loop variable), and that
    ``.eval()`` cannot run between the two in such an iteration (``for phase in ["train", "val"]``: ``if phase ==
    "train": model.train() else: model.eval()``, then a forward only the train phase runs)."""
    def of_model(event: ev.Event) -> bool:
        return event.key is not None and (analysis.same(event.key, forward.key) or (forward.key or "").startswith(event.key + "."))
    switches = [e for e in analysis.events if e.kind == ev.EVAL and e.node is node]
    loops = [_carrier(e, forward) for e in switches]
    if not switches or any(loop is None for loop in loops):
        return False
    for switch in analysis.events:
        if switch.kind != ev.TRAIN or not _surely_train(switch.node) or switch.seq > forward.seq or not of_model(switch) \
                or not forward.inside(switch.frame) \
                or not all(switch.inside(loop) for loop in loops):  # type: ignore[arg-type]
            continue
        branches = {(id(test), taken): (test, taken) for test, taken in switch.tests}
        extra = [c for c in switch.conds if c not in forward.conds]
        if not all(c in branches and implied(forward, *branches[c], switch) for c in extra):
            continue
        if not any(switch.seq < e.seq < forward.seq and not exclusive(e, forward) for e in switches):
            return True  # the eval runs before that train() in the iteration, or never in an iteration that reaches the forward
    return False


def _carrier(switch: ev.Event, forward: ev.Event):
    """The innermost loop around both events: the one whose iterations carry the mode from one to the other."""
    frame = forward.frame
    while frame is not None and not (frame.kind == "loop" and switch.inside(frame)):
        frame = frame.parent
    return frame


def _surely_train(call) -> bool:
    """``model.train()`` / ``model.train(True)``, not ``model.train(is_training)``."""
    return not call.args or isinstance(call.args[0], ast.Constant) and call.args[0].value is True

