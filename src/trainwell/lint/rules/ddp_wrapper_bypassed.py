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
from trainwell.lint.context import FileContext, key_of, kwarg, method_name, strip_identity
from trainwell.lint.dataflow import no_grad_nodes, scope_nodes
from trainwell.lint.rules import TRAINING
from trainwell.lint.rules._data import qual_last, trains

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
            func = key_of(call.func)
            through_module = func in (f"{wrapper}.module", f"{wrapper}.module.forward") and (
                wrapper.startswith("self.") or id(call) in local)
            through_original = (inner is not None and inner != wrapper and func in (inner, f"{inner}.forward")
                                and id(call) in local and call.lineno > line)
            if not (through_module or through_original) or id(call) in quiet or id(call) in reported:
                continue
            home = owner.get(id(call))
            frame = next((f for f in frames if _holds(f, call, home)), None)
            if frame is None or _calls_wrapper(frame, wrapper):
                continue
            reported.add(id(call))
            seen = f"`{ctx.snippet(call)}`"
            yield ctx.finding(
                CODE, call,
                f"{seen} runs the training forward around `{wrapper}`, the DistributedDataParallel wrapper (line {line}), "
                f"and the iteration (loop at line {frame.node.lineno}) never calls `{wrapper}` itself: DDP's reducer "
                "never all-reduces these gradients, so each rank steps on its own and the replicas drift apart.",
                f"Call the wrapper for training forwards: `{wrapper}(...)`; keep `{wrapper}.module` for state_dict(), "
                "attributes and no_grad evaluation.",
            )


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


def _holds(frame: ev.Frame, call: ast.Call, home: ast.AST | None) -> bool:
    """Whether ``call`` runs in an iteration of ``frame``: written in its loop, or in a helper inlined into it."""
    if any(n is call for n in ast.walk(frame.node)):
        return True
    return home is not None and not isinstance(home, ast.Module) and any(e.scope is home for e in frame.events)


def _calls_wrapper(frame: ev.Frame, wrapper: str) -> bool:
    """A forward through the wrapper in the iteration: an event, or a call in the loop or in a helper inlined in it."""
    if any(e.key == wrapper for e in frame.of(ev.FORWARD)):
        return True
    bodies = [frame.node, *{id(e.scope): e.scope for e in frame.events if e.scope is not None
                            and not isinstance(e.scope, ast.Module)}.values()]
    return any(isinstance(n, ast.Call) and key_of(n.func) in (wrapper, f"{wrapper}.forward")
               for body in bodies for n in ast.walk(body))


def _world_size_one(ctx: FileContext) -> bool:
    for call in ctx.calls:
        size = kwarg(call, "world_size")
        if isinstance(size, ast.Constant) and size.value == 1:
            return True
    return False
