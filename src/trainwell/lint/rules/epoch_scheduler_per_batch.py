"""TW106: a per-epoch schedule stepped inside the batch loop."""

from __future__ import annotations

import ast
from typing import Iterator

from trainwell.lint import events as ev
from trainwell.lint.context import FileContext
from trainwell.lint.iteration import periodic_ids
from trainwell.lint.roles import SCHEDULERS, SIZE_ARGS
from trainwell.lint.rules import TRAINING
from trainwell.diagnostic import Finding

CODE = "TW106"
REQUIRES = TRAINING


def check(ctx: FileContext) -> Iterator[Finding]:
    analysis = ctx.analysis
    for sched in (e for e in analysis.events if e.kind == ev.SCHED_STEP):
        role = ctx.role(sched.key)
        if role is None or not (role.info.get("per") == "epoch" or role.info.get("per") == "unknown" and SCHEDULERS.get(role.cls) == "sized"):
            continue
        frame = sched.frame
        if frame is None or frame.kind != "loop" or not any(b.frame is frame for b in frame.of(ev.BACKWARD)):
            continue  # not in the loop that runs backward() each batch
        epochs = _epoch_loop(frame)
        if epochs is None:
            continue  # the only loop: its iterations are the unit the schedule was sized in (an optimisation loop)
        if role.info.get("per") != "epoch" and not _sized_like(role.node, epochs):
            continue  # a bare size (T_max=200) counts epochs only when the epoch loop runs that many times
        if any(c[0] not in periodic_ids(sched) for c in sched.conds if not any(c in b.conds for b in frame.of(ev.BACKWARD))):
            continue  # guarded by a condition other than an accumulation window (e.g. `if last_batch:`)
        over = f"`{frame.iter_key}`" if frame.iter_key else f"the loop at line {frame.node.lineno}"
        times = f"len({frame.iter_key}) times" if frame.iter_key else "many times"
        yield ctx.finding(
            CODE, sched.node,
            f"`{ctx.snippet(sched.node)}` ({role.cls}, a per-epoch schedule) is called inside the batch loop over {over} "
            f"(line {frame.node.lineno}): the LR decays {times} too fast.",
            f"Move it after the loop over {over} (once per epoch), or size the schedule in steps (e.g. T_max=epochs * len(loader)).",
        )


def _epoch_loop(frame) -> ast.AST | None:
    """The loop around the batch loop (a single loop of optimisation steps has no epochs to decay by), or None."""
    parent = frame.parent
    while parent is not None:
        if parent.kind == "loop":
            return parent.node
        parent = parent.parent
    return None


def _sized_like(constructor: ast.AST | None, loop: ast.AST) -> bool:
    """Whether the schedule's size (T_max, step_size, milestones' last) is the epoch loop's count: ``T_max=200``
    with ``for epoch in range(start, start + 200)``, or the same expression as the loop's bound."""
    if not isinstance(constructor, ast.Call) or not isinstance(loop, (ast.For, ast.AsyncFor)):
        return False
    count = _range_count(loop.iter)
    if count is None:
        return False
    sizes = [k.value for k in constructor.keywords if k.arg in SIZE_ARGS] + list(constructor.args[1:2])
    sizes = [s.elts[-1] if isinstance(s, (ast.List, ast.Tuple)) and s.elts else s for s in sizes]
    return any(ast.dump(s) == ast.dump(count) for s in sizes)


def _range_count(node: ast.expr) -> ast.expr | None:
    """How many times ``range(...)`` runs, as an expression: ``N`` for ``range(N)``, ``range(0, N)``,
    ``range(a, a + N)`` and ``range(1, N + 1)``; None for anything else."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range") or node.keywords:
        return None
    args = node.args
    if len(args) == 1:
        return args[0]
    if len(args) != 2:
        return None
    start, stop = args
    if isinstance(start, ast.Constant) and start.value == 0:
        return stop
    if isinstance(stop, ast.BinOp) and isinstance(stop.op, ast.Add):
        if ast.dump(stop.left) == ast.dump(start):
            return stop.right
        if isinstance(start, ast.Constant) and isinstance(stop.right, ast.Constant) and start.value == stop.right.value:
            return stop.left
    if all(isinstance(a, ast.Constant) and type(a.value) is int for a in args):
        return ast.Constant(stop.value - start.value)  # type: ignore[operator]
    return None
