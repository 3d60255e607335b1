"""TW306: a validation or test DataLoader with ``drop_last=True``: every evaluation skips the last partial batch.

Premises, each read from the file: a ``DataLoader(...)`` built here passes
``drop_last=True``; every loop over it (after inlining helpers) runs forward
passes and no training step, and each of those forwards is an evaluation
(autograd off, or the model in eval mode) and the loop measures something (a
loss, a value read back, a running sum): bare forwards in train mode under
no_grad are a BatchNorm re-estimation pass, where dropping a ragged batch is
deliberate; and the dataset's length is not known to be a multiple of the
batch size.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from trainwell.diagnostic import Finding
from trainwell.lint import events as ev
from trainwell.lint.context import FileContext, kwarg
from trainwell.lint.rules._data import dataset_length, loader_argument, loader_calls, loops_over, single_value, trains

CODE = "TW306"


def check(ctx: FileContext) -> Iterator[Finding]:
    if "drop_last" not in ctx.source:
        return
    reported: set[int] = set()
    for key, call in loader_calls(ctx):
        drop = single_value(ctx, kwarg(call, "drop_last"))
        if not (isinstance(drop, ast.Constant) and drop.value is True) or id(call) in reported:
            continue
        loops = loops_over(ctx, key)
        if not loops or any(trains(f) for f in loops):
            continue
        if not all(_evaluates(f) for f in loops):
            continue
        size = dataset_length(ctx, loader_argument(call, "dataset"))
        batch = single_value(ctx, loader_argument(call, "batch_size"))
        batch_size = batch.value if isinstance(batch, ast.Constant) and type(batch.value) is int else None
        if size is not None and batch_size and size % batch_size == 0:
            continue
        reported.add(id(call))
        dropped = (f"{size % batch_size} of its {size} samples" if size is not None and batch_size
                   else "up to batch_size - 1 samples")
        yield ctx.finding(
            CODE, call,
            f"`{ctx.snippet(call)}` passes drop_last=True but only feeds evaluation (loop at line {loops[0].node.lineno}): "
            f"every evaluation silently skips {dropped}, so the metric is computed on a subset and the best "
            "checkpoint is picked on it.",
            "Remove drop_last=True from the evaluation loader (keep it on the training loader if you need it).",
        )


def _evaluates(frame: ev.Frame) -> bool:
    """Every forward of the loop has autograd off or the model in eval mode, and the loop measures something
    (a loss, a value read back, a running sum or list); a pass of bare forwards in train mode is a calibration."""
    forwards = frame.of(ev.FORWARD)
    if not forwards or not all(f.grad is False or f.mode == frozenset({"eval"}) for f in forwards):
        return False
    measures = any(frame.has(kind) for kind in (ev.LOSS, ev.SYNC, ev.APPEND, ev.AUG))
    return measures or all(f.mode == frozenset({"eval"}) for f in forwards)
