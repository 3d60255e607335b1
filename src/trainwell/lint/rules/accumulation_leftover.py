"""TW115: accumulation that steps when ``(i + 1) % k == 0`` with ``i`` restarting every epoch and no last-batch step.

Premises, each read from the file: a loop ``for i, batch in enumerate(loader)``
runs inside a loop that repeats it (an epoch loop); every optimizer step of
that loop sits under ``if`` tests whose modulus reads ``i`` (the index that
restarts at each pass) by a ``k`` that is not 1; no test also steps on the
last batch (``or i + 1 == len(loader)``); some backward runs outside the
stepping batches (a loop that trains only every k-th batch accumulates nothing);
``k`` is not read from a DeepSpeed config (its engine accumulates), nor can
only be 1 (``k = 1`` then ``k = bs // MAX`` under an ``if`` that the file's
constants never take, :mod:`trainwell.lint.constants`); nothing clears the
gradients outside that window in the epoch (a ``zero_grad`` at the start or the
end of every epoch, or per iteration) and no step follows the loop in the
epoch; and the loader's length is not known to be a multiple of ``k``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from trainwell.diagnostic import Finding
from trainwell.lint import events as ev
from trainwell.lint.constants import always_one
from trainwell.lint.context import FileContext, key_of
from trainwell.lint.events import Frame
from trainwell.lint.rules import TRAINING
from trainwell.lint.rules._data import assigned, epoch_loop, known_length, single_value
from trainwell.lint.syntax import walk

CODE = "TW115"
REQUIRES = TRAINING


def check(ctx: FileContext) -> Iterator[Finding]:
    reported: set[int] = set()
    for frame in ctx.analysis.frames:
        index = _restarting_index(frame)
        if index is None or frame.iter_key is None:
            continue
        steps = [s for s in frame.events if s.kind == ev.STEP and s.inside(frame)]
        backs = [b for b in frame.events if b.kind == ev.BACKWARD and b.grad is not False and b.inside(frame)]
        if not steps or not backs:
            continue
        windows = [_window(s, index) for s in steps]
        if any(w is None for w in windows):
            continue  # a step outside an `i % k` window, or a test that also steps on the last batch
        test, k = windows[0]  # type: ignore[misc]
        window_ids = {id(w[0]) for w in windows}  # type: ignore[index]
        if all(any(id(w) in window_ids for w in b.periodic) for b in backs):
            continue  # backward runs only in the stepping batches (`if i % k == 0:` trains every k-th batch): nothing accumulates
        if _from_deepspeed(ctx, k):
            continue
        if _clears_outside(frame, {id(w[0]) for w in windows}) or id(test) in reported:  # type: ignore[index]
            continue
        epoch = epoch_loop(frame)
        if epoch is None or _steps_after(epoch, frame):
            continue
        if isinstance(k, ast.AST):
            fixed = single_value(ctx, k)
            if isinstance(fixed, ast.Constant) and type(fixed.value) is int:
                if fixed.value <= 1:
                    continue
                k_value = fixed.value
            else:
                k_value = None
        else:
            k_value = k
        role = ctx.role(frame.iter_key)
        length = known_length(ctx, role.node if role is not None else None)
        if length is not None and k_value is not None and length % k_value == 0:
            continue
        if isinstance(k, ast.expr) and always_one(ctx, k):
            continue  # a k that can only be 1 as the file calls this code accumulates nothing (asked last: it may read the tree)
        reported.add(id(test))
        loader = frame.iter_key
        k_text = ast.unparse(k) if isinstance(k, ast.AST) else str(k)
        yield ctx.finding(
            CODE, test,
            f"`{ctx.snippet(test.test)}` steps every {k_text} batches of `{loader}`, but `{index}` restarts at 0 each epoch "
            f"(loop at line {epoch.node.lineno}) and nothing steps on the last batch: when len({loader}) is not a "
            f"multiple of {k_text}, the epoch's last micro-batches are neither applied nor cleared and are added into "
            "the next epoch's first step (the last epoch's tail never trains).",
            f"Also step on the last batch: `if (i + 1) % {k_text} == 0 or i + 1 == len({loader}):`, or count micro-batches "
            "with a counter that runs across epochs.",
        )


def _restarting_index(frame: Frame) -> str | None:
    """``i`` for ``for i, batch in enumerate(loader)`` (also through tqdm): an index that restarts every pass."""
    node = frame.node
    if frame.kind != "loop" or not isinstance(node, (ast.For, ast.AsyncFor)):
        return None
    it = node.iter
    while isinstance(it, ast.Call) and (key_of(it.func) or "").rsplit(".", 1)[-1] in ("tqdm", "enumerate"):
        if (key_of(it.func) or "").rsplit(".", 1)[-1] == "enumerate":
            target = node.target
            if isinstance(target, ast.Tuple) and target.elts and isinstance(target.elts[0], ast.Name):
                return target.elts[0].id
            return None
        it = it.args[0] if it.args else None
    return None


def _window(step: ev.Event, index: str) -> tuple[ast.If, object] | None:
    """The ``if`` whose test is ``(index + c) % k == 0`` around ``step``, and k (an int, or the expression);
    None when the step is not only under such a window, or the test has another way in (``or``)."""
    for window in step.periodic:
        test = window.test
        if any(isinstance(n, ast.BoolOp) and isinstance(n.op, ast.Or) for n in walk(test)):
            return None
        for node in walk(test):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and _reads(node.left, index):
                k = node.right
                if isinstance(k, ast.Constant) and isinstance(k.value, int):
                    return None if k.value <= 1 else (window, k.value)
                return window, k
    return None


def _from_deepspeed(ctx: FileContext, k: object) -> bool:
    """Whether ``k`` is read from a DeepSpeed config: DeepSpeed's engine then accumulates and steps itself (the
    optimizer a prepared loop steps is a wrapper whose ``step``/``zero_grad`` do nothing), whatever the loop counts."""
    if not isinstance(k, ast.AST):
        return False
    key = key_of(k)
    values = assigned(ctx, key) if key is not None else []
    return any("deepspeed" in ast.unparse(v).lower() for v in [k, *values])


def _reads(expr: ast.expr, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in walk(expr))


def _clears_outside(frame: Frame, windows: set[int]) -> bool:
    """A zero_grad (or step) in the repeating loops around ``frame``, or inside it outside the step windows."""
    parent = frame
    while parent is not None:
        for event in parent.events:
            if event.kind != ev.ZERO_GRAD:
                continue
            if not event.inside(frame) or not any(id(w) in windows for w in event.periodic):
                return True
        parent = parent.parent
    return False


def _steps_after(epoch: Frame, frame: Frame) -> bool:
    """Whether the epoch steps again after the loop ``frame`` (a step for the leftover micro-batches)."""
    last = max(e.seq for e in frame.events)
    return any(e.kind == ev.STEP and e.seq > last and not e.inside(frame) for e in epoch.events)
