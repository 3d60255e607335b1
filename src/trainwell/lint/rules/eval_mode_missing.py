"""TW202: validation or inference forward passes of a model with Dropout or BatchNorm in training mode."""

from __future__ import annotations

import ast
from typing import Iterator

from trainwell.lint import events as ev
from trainwell.lint.context import FileContext
from trainwell.lint.dataflow import reaching
from trainwell.lint.events import Event
from trainwell.lint.iteration import autograd_on, training_forward, validation_forward
from trainwell.lint.loops import UNKNOWN
from trainwell.lint.rules import TRAINING
from trainwell.lint.rules._data import loader_calls
from trainwell.lint.rules.no_grad_missing import graph_dropped, parents
from trainwell.diagnostic import Finding
from trainwell.lint.syntax import walk

CODE = "TW202"
REQUIRES = TRAINING
# Precision: a forward pass counts as validation/inference here under no_grad / inference_mode, or with autograd
# on (TW203's pass, missing both `eval()` and `no_grad`) when it runs over the batches of a loader (a DataLoader,
# or the batches the training loop reads) in a loop that steps no optimizer, when its output goes into a loss
# that is only read as a number (`.item()`, `.data`): a measured loss, or when it runs in an entry point that never
# steps an optimizer and only numbers or indices are kept of its output (a command that predicts or generates).
# Elsewhere (an RL rollout over environment steps, a GAN's samples, a forward whose output is backpropagated in
# another function) training mode may be intended.
_WRAPPERS = {"DistributedDataParallel", "DataParallel"}  # `nn.parallel.DistributedDataParallel(model)` runs the model it wraps
_NUMBER_READS = {"item", "data", "cpu", "numpy", "tolist", "detach"}


def check(ctx: FileContext) -> Iterator[Finding]:
    analysis = ctx.analysis
    if not any(e.kind == ev.STEP for e in analysis.events):
        return  # a program that never steps an optimizer is not a training run (tests, demos)
    for forward in (e for e in analysis.events if validation_forward(e)):
        if forward.grad is not False and not (autograd_on(forward) and (_over_batches(ctx, forward) or _measured(ctx, forward)
                                                                        or _prediction(ctx, forward))):
            continue
        if not ctx.has_mode_layers(forward.key) or _local_model_without_mode_layers(ctx, forward):
            continue
        if (forward.frame is None or forward.frame.kind != "loop") and not any(e.kind == ev.STEP and e.seq < forward.seq for e in analysis.events):
            continue  # one pass before any training step: initialising lazy modules, a shape check; not validation
        if forward.mode == frozenset({"train"}):
            state = "while it is in training mode"
        elif _as_trained(analysis, forward):
            state = "in the mode it was trained in, which is training mode on some path (nothing switches it in between)"
        elif (state := _left_in_training(ctx, forward)) is None:
            continue  # the mode must be known: built here in train mode, or `.train()` called
        yield ctx.finding(
            CODE, forward.node,
            f"`{ctx.snippet(forward.node)}` runs `{forward.key}` for validation/inference {state}: "
            "Dropout still drops and BatchNorm uses (and updates) batch statistics, so the results are noisy and wrong.",
            f"Call `{forward.key}.eval()` before validation or inference, and `{forward.key}.train()` before training resumes.",
        )


def _over_batches(ctx: FileContext, forward: Event) -> bool:
    """Whether the forward runs in a loop over batches (a DataLoader, or the iterable a training loop of the file
    reads), a loop that steps no optimizer (a validation pass; a GAN's samples drawn inside its training loop are
    not one)."""
    frame = forward.frame
    analysis = ctx.analysis
    while frame is not None and frame.kind == "loop":
        key = frame.iter_key
        if key is not None:
            role = ctx.role(key)
            if (role is not None and role.kind == "loader") or key in _loader_keys(ctx) \
                    or any(f.iter_key is not None and f is not frame and analysis.same(f.iter_key, key) for f in analysis.step_frames):
                return not frame.has(ev.STEP)
        frame = frame.parent
    return False


def _prediction(ctx: FileContext, forward: Event) -> bool:
    """Whether the forward runs in an entry point that never steps an optimizer (a command that generates or
    predicts) and only numbers or indices are kept of its output (``logits[-1].argmax().item()``): inference."""
    return not any(e.kind == ev.STEP for e in _entry(forward).events) \
        and graph_dropped(ctx.home(forward.node), forward.node, forward.scope)


def _loader_keys(ctx: FileContext) -> set[str]:
    return {key for key, _ in loader_calls(ctx)}


def _measured(ctx: FileContext, forward: Event) -> bool:
    """Whether the forward's output goes into a loss (after it, in the same function) whose value is only read as a
    number: a validation loss, measured and never backpropagated."""
    home, scope = ctx.home(forward.node), forward.scope
    if scope is None:
        return False
    names = _assigned_names(home, forward.node, scope)
    for loss in ctx.analysis.events:
        if loss.kind != ev.LOSS or loss.scope is not scope or loss.seq < forward.seq or not isinstance(loss.node, ast.Call):
            continue
        inputs = [n for a in [*loss.node.args, *(k.value for k in loss.node.keywords)] for n in walk(a)]
        if any(n is forward.node or (isinstance(n, ast.Name) and n.id in names) for n in inputs) \
                and _read_as_number(home, loss.node, scope):
            return True
    return False


def _assigned_names(ctx: FileContext, node: ast.AST, scope: ast.AST) -> set[str]:
    """The names ``x = model(...)`` / ``a, b = model(...)`` binds to the forward's output."""
    parent = parents(ctx, scope).get(id(node))
    if isinstance(parent, ast.Assign) and parent.value is node:
        return {n.id for t in parent.targets for n in walk(t) if isinstance(n, ast.Name)}
    return set()


def _read_as_number(ctx: FileContext, call: ast.Call, scope: ast.AST) -> bool:
    """``loss(...).item()``, ``loss(...).data``; or ``v = loss(...)`` with every read of ``v`` such (``v.item()``)."""
    found = parents(ctx, scope)
    parent = found.get(id(call))
    if isinstance(parent, ast.Attribute) and parent.attr in _NUMBER_READS:
        return True
    if not (isinstance(parent, ast.Assign) and parent.value is call and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name)):
        return False
    name = parent.targets[0].id
    uses = ctx.loads(scope, name)
    return bool(uses) and all(isinstance(u_parent := found.get(id(u)), ast.Attribute) and u_parent.attr in _NUMBER_READS for u in uses)


def _as_trained(analysis, forward: Event) -> bool:
    """Whether the forward runs in the very mode a training forward of the same model ran in before it, with no
    `.train()` / `.eval()` of that model in between, and that mode is training mode on some path (a mode chosen per
    run for training, `model.train()` or `model.eval()` for a frozen backbone, then validation without `eval()`)."""
    if "train" not in forward.mode or UNKNOWN in forward.mode:
        return False
    entry = _entry(forward)
    earlier = [t for t in entry.events if training_forward(t) and t.seq < forward.seq and t.key is not None
               and analysis.same(t.key, forward.key)]
    if not earlier:
        return False
    last = max(earlier, key=lambda t: t.seq)
    if last.mode != forward.mode:
        return False
    return not any(e.kind in (ev.TRAIN, ev.EVAL) and last.seq < e.seq < forward.seq and e.key is not None
                   and (analysis.same(e.key, forward.key) or (forward.key or "").startswith(e.key + ".")) for e in entry.events)


def _left_in_training(ctx: FileContext, forward: Event) -> str | None:
    """How the forward finds its model in training mode on some runs whose loops all ran (``Event.ran``): the
    ``eval()`` after the training loop's ``train()`` sits under an ``if`` whose test keeps its value for the run
    (``if not args.fastmode:``), so a run that takes the other branch never switches. The forward itself must run on
    every path of its entry point (no ``if`` around it that could go with that test). None otherwise."""
    ran = forward.ran
    evals = [m[1] for m in ran if isinstance(m, tuple) and m[0] == "eval"]
    if "train" not in ran or UNKNOWN in ran or not evals or forward.conds or forward.ends:
        return None
    skipped = [e for e in _entry(forward).events if e.kind == ev.EVAL and any(e.node is call for call in evals)]
    tests = [t for e in skipped for t, _ in reversed(e.tests) if (t, True) not in forward.tests and (t, False) not in forward.tests]
    if not tests:
        return None
    last = skipped[-1]
    return (f"in training mode on the runs where the `if` at line {tests[0].lineno} skips `{ctx.snippet(last.node)}` "
            f"(line {last.line}), which leaves the training loop's `train()` as the last switch")


def _entry(event: Event):
    frame = event.frame
    while frame.parent is not None:
        frame = frame.parent
    return frame


def _local_model_without_mode_layers(ctx: FileContext, forward: Event) -> bool:
    """Whether the function of ``forward`` builds its own model under the key, without Dropout or BatchNorm
    (``net = nn.Sequential(nn.Linear(5, 1))``), while another function's ``net`` of the file has them: roles are per
    key, the model that runs here is the local one."""
    if forward.scope is None or forward.key is None or "." in forward.key:
        return False
    values = reaching(ctx, forward.scope, forward.key, forward.line)
    if not values:  # a closure (`def eval_loss(): return loss(net(x), y)`) reads the model of the function around it
        outer = next((fn for fn in ctx.functions.values() if fn is not forward.scope and ctx.encloses(fn, forward.scope)), None)
        values = reaching(ctx, outer, forward.key, 10**9) if outer is not None else []
    role = ctx.role(forward.key)
    return bool(values) and all(isinstance(v, ast.Call) and (ctx.call_name(v) or "").startswith("torch.nn.")
                                and (ctx.call_name(v) or "").rsplit(".", 1)[-1] not in _WRAPPERS for v in values) \
        and not any(role is not None and v is role.node for v in values) and not any(ctx.built_with_mode_layers(v) for v in values)
