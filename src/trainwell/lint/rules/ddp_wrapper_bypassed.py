"""TW113: a training forward that goes around the DistributedDataParallel wrapper.

Premises, each read from the file: ``ddp = DistributedDataParallel(model, ...)``;
inside a loop that trains (backward and an optimizer step), with autograd on, a
forward goes through ``ddp.module(...)`` (or ``ddp.module.forward``), or through
``model(...)``, the object that was wrapped, in the function that wrapped it;
the same iteration never calls the wrapper itself (a ``no_sync`` micro-batch
through the inner module followed by a forward through the wrapper is
all-reduced); and the file does not pin the world size to 1.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from trainwell.diagnostic import Finding
from trainwell.lint import events as ev
from trainwell.lint.events import subst_key
from trainwell.lint.context import FileContext, key_of, kwarg, method_name, strip_identity
from trainwell.lint.dataflow import no_grad_nodes, scope_nodes
from trainwell.lint.rules import TRAINING
from trainwell.lint.rules._data import qual_last, trains
from trainwell.lint.syntax import walk

CODE = "TW113"
REQUIRES = TRAINING
_CHAINS = {"to", "cuda", "cpu", "float", "half", "bfloat16", "double"}


def check(ctx: FileContext) -> Iterator[Finding]:
    if "DistributedDataParallel" not in ctx.source or _world_size_one(ctx):
        return
    wraps = _wraps(ctx)
    if not wraps:
        return
    frames = [f for f in ctx.analysis.frames if f.kind == "loop" and trains(f)]
    quiet = no_grad_nodes(ctx)
    reported: set[int] = set()
    owner = {id(n): scope for scope in _scopes(ctx) for n in scope_nodes(ctx, scope)}
    for scope, line, wrapper, inner in wraps:
        local = {id(n) for n in scope_nodes(ctx, scope)}
        for call in ctx.calls:
            if id(call) in quiet or id(call) in reported:
                continue
            home = owner.get(id(call))
            frame = next((f for f in frames if _holds(ctx, f, call, home)), None)
            if frame is None:
                continue
            func = _key_in_frame(frame, call, home, local)
            through_module = func in (f"{wrapper}.module", f"{wrapper}.module.forward") and (
                wrapper.startswith("self.") or id(call) in local or _runs_in(frame, local) or _called_after(frame, home, scope, line))
            through_original = (inner is not None and inner != wrapper and func in (inner, f"{inner}.forward")
                                and id(call) in local and call.lineno > line)
            if not (through_module or through_original):
                continue
            covered, gated = _calls_wrapper(ctx, frame, wrapper, quiet, call)
            if covered:
                continue
            reported.add(id(call))
            seen = f"`{ctx.snippet(call)}`"
            yield ctx.finding(
                CODE, call,
                f"{seen} runs the training forward around `{wrapper}`, the DistributedDataParallel wrapper (line {line}), "
                f"and the iteration (loop at line {frame.node.lineno}) {_never(wrapper, gated)}: DDP's reducer "
                "never all-reduces these gradients, so each rank steps on its own and the replicas drift apart.",
                f"Call the wrapper for training forwards: `{wrapper}(...)`; keep `{wrapper}.module` for state_dict(), "
                "attributes and no_grad evaluation.",
            )


def _never(wrapper: str, gated: list[int]) -> str:
    if not gated:
        return f"never calls `{wrapper}` itself"
    lines = ", ".join(map(str, gated))
    return (f"calls `{wrapper}` itself only conditionally (line{'s' if len(gated) > 1 else ''} {lines}) while the "
            "step runs also when the condition is false")


def _wraps(ctx: FileContext) -> list[tuple[ast.AST, int, str, str | None]]:
    """(scope, line, wrapper key, wrapped model key) for each ``key = DistributedDataParallel(model, ...)``."""
    found = []
    for scope in _scopes(ctx):
        for node in scope_nodes(ctx, scope):
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Call)):
                continue
            if qual_last(ctx, node.value) != "DistributedDataParallel":
                continue
            wrapper = key_of(node.targets[0])
            given = node.value.args[0] if node.value.args else kwarg(node.value, "module")
            if wrapper is not None:
                found.append((scope, node.lineno, wrapper, key_of(_unchained(given)) if given is not None else None))
    return found


def _unchained(node: ast.expr) -> ast.expr:
    """``model`` for ``model.to(rank)`` / ``model.cuda()``."""
    node = strip_identity(node)
    while isinstance(node, ast.Call) and method_name(node) in _CHAINS:
        node = node.func.value  # type: ignore[attr-defined]
    return node


def _scopes(ctx: FileContext) -> list[ast.AST]:
    return [ctx.tree, *ctx.functions.values(), *(m for ms in ctx.methods.values() for m in ms.values())]


def _holds(ctx: FileContext, frame: ev.Frame, call: ast.Call, home: ast.AST | None) -> bool:
    """Whether ``call`` runs in an iteration of ``frame``: written in its loop, or in a helper inlined into it."""
    if ctx.encloses(frame.node, call):
        return True
    return home is not None and not isinstance(home, ast.Module) and any(e.scope is home for e in frame.events)


def _runs_in(frame: ev.Frame | None, local: set[int]) -> bool:
    """Whether the loop ``frame`` (or a loop around it) is written in the scope whose nodes are ``local``."""
    while frame is not None:
        if id(frame.node) in local:
            return True
        frame = frame.parent
    return False


def _called_after(frame: ev.Frame, home: ast.AST | None, scope: ast.AST, line: int) -> bool:
    """Whether the helper ``home`` runs in ``frame`` because the wrapping scope calls it below the wrap (``model =
    DDP(model)`` then ``train_model(model, ...)`` at the top of the script): its names are the wrapper's."""
    return home is not None and any(e.scope is home and any(site.caller is scope and site.call.lineno > line for site in e.sites)
                                    for e in frame.events)


def _key_in_frame(frame: ev.Frame, call: ast.Call, home: ast.AST | None, local: set[int]) -> str | None:
    """The callee's key as the caller sees it: a helper's parameter names replaced by the caller's arguments."""
    if id(call) in local or home is None:
        return key_of(call.func)
    subst = next((e.subst for e in frame.events if e.scope is home), {})
    return subst_key(call.func, subst)


def _calls_wrapper(ctx: FileContext, frame: ev.Frame, wrapper: str, quiet: set[int], bypass: ast.Call) -> tuple[bool, list[int]]:
    """Whether a forward through the wrapper with autograd on covers ``bypass`` in the iteration (an event, or a call
    in the loop or in a helper inlined in it), and the lines of the wrapper forwards that do not cover it.

    A no-grad forward (the epoch's validation pass) builds no graph and all-reduces nothing. A forward under an ``if``
    that neither the bypass nor a step sits in (``if opt.adv > 0 and i % k == 0: model(x_adv)``) leaves the
    iterations where the test is false with no all-reduce; one in the other branch of an ``if`` around the bypass
    (micro-batches through ``.module``, the last through the wrapper) is deliberate and covers it. So does a forward
    whose ``if`` may be decided by the same values as the bypass's or the step's (``if phase == "val": ... else:
    model(x)`` with the step under ``if phase == "train":``): only a test with a part that reads none of those
    (``opt.adv > 0``, ``i % k == 0``) proves iterations that step without it."""
    forwards = [e.node for e in frame.of(ev.FORWARD) if e.key == wrapper and e.grad is not False]
    bodies = [frame.node, *{id(e.scope): e.scope for e in frame.events if e.scope is not None and e.grad is not False
                            and not isinstance(e.scope, ast.Module)}.values()]
    forwards += [n for body in bodies for n in walk(body) if isinstance(n, ast.Call) and id(n) not in quiet
                 and key_of(n.func) in (wrapper, f"{wrapper}.forward")]
    if not forwards:
        return False, []
    mine = _conds(ctx, frame, bypass)
    if mine is None:
        return True, []
    steps = [dict(e.conds) for e in frame.of(ev.STEP)]
    tests = _tests(ctx)
    context = _keys([tests[k] for step in [mine, *steps] for k in step if k in tests])
    gated = []
    for node in forwards:
        theirs = _conds(ctx, frame, node)
        if theirs is None or any(mine.get(k, b) != b for k, b in theirs.items()):
            return True, []  # unknown, or the other branch of an `if` around the bypass
        if all(mine.get(k) == b for k, b in theirs.items()) or any(
                all(mine.get(k, step.get(k)) == b for k, b in theirs.items()) for step in steps):
            return True, []
        if not any(k not in mine and k in tests and _may_skip(tests[k], b, context) for k, b in theirs.items()):
            return True, []  # its condition may hold whenever the step runs
        gated.append(node.lineno)  # type: ignore[attr-defined]
    return False, sorted(set(gated))


def _tests(ctx: FileContext) -> dict[int, ast.expr]:
    """The test of each two-way ``if`` of the file, by the id the loop model records its branches under."""
    cached = ctx.__dict__.get("_tw113_tests")
    if cached is None:
        cached = ctx.__dict__["_tw113_tests"] = {id(n): n.test for n in ctx.nodes if isinstance(n, ast.If)}
    return cached


def _keys(tests: list[ast.expr]) -> set[str]:
    """The values a test reads: its outermost names and attribute chains (``opt.DG``, not ``opt``)."""
    found = {key_of(n) for t in tests for n in walk(t) if isinstance(n, (ast.Name, ast.Attribute))} - {None}
    return {k for k in found if not any(other.startswith(k + ".") for other in found)}  # type: ignore[union-attr]


def _may_skip(test: ast.expr, branch: bool, context: set[str]) -> bool:
    """Whether the forward under ``test`` (its ``branch``) is skipped in some iteration that runs the step: a part of
    the test that the forward needs (a conjunct of ``A and B``, a disjunct of ``A or B`` under ``else``) reads none of
    the values the bypass's and the step's own conditions read."""
    needed = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And if branch else ast.Or) else [test]
    return any(not (_keys([part]) & context) for part in needed)


def _conds(ctx: FileContext, frame: ev.Frame, node: ast.AST) -> dict[int, bool] | None:
    """The ``if`` branches (as the loop model records them) that ``node`` runs in, read from an event of the
    iteration at or around it; None when no event says."""
    for event in frame.events:
        if event.node is node or ctx.encloses(event.node, node):
            return dict(event.conds)
    return None


def _world_size_one(ctx: FileContext) -> bool:
    for call in ctx.calls:
        size = kwarg(call, "world_size")
        if isinstance(size, ast.Constant) and size.value == 1:
            return True
    return False
