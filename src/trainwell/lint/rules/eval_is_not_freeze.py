"""TW205: a part of the model 'frozen' with .eval() (or `module.requires_grad = False`) while its
parameters still require grad and sit in the optimizer."""

from __future__ import annotations

import ast
from typing import Iterator

from trainwell.lint import events as ev
from trainwell.lint.context import FileContext, key_of, method_name
from trainwell.lint.iteration import validation_forward
from trainwell.lint.rules import TRAINING
from trainwell.diagnostic import Finding

CODE = "TW205"
REQUIRES = TRAINING


def check(ctx: FileContext) -> Iterator[Finding]:
    analysis = ctx.analysis
    owners: dict[str, set[str]] = {}  # optimizer -> the models whose parameters went into it unfiltered
    for key, role in ctx.roles.items():
        if role.kind == "optimizer" and isinstance(role.node, ast.Call) and "requires_grad" not in ast.unparse(role.node):
            owners[key] = analysis.optimizer_models(key)
    owned = set().union(*owners.values()) if owners else set()
    if not owned:
        return
    frozen = _frozen(ctx)
    steps = [e for e in analysis.events if e.kind == ev.STEP and e.key]
    for_validation = {id(v[1]) for e in analysis.events if validation_forward(e) for v in e.mode if isinstance(v, tuple)}
    for event in (e for e in analysis.events if e.kind == ev.EVAL and e.key):
        if id(event.node) in for_validation:
            continue  # eval for evaluation or sampling: TW201 / TW202 territory
        root = analysis.part_of(event.key, owned)
        if root is None or any(analysis.part_of(event.key, {f}) for f in frozen):
            continue
        stepping = [k for k, models in owners.items() if root in models]
        if not _a_part(analysis, event.key, root, [owners[k] for k in stepping]) or not _training_follows(event, stepping, steps, analysis):
            continue  # the whole trained model switched for evaluation, export or saving (TW201's business), or no step follows
        yield ctx.finding(
            CODE, event.node,
            f"`{ctx.snippet(event.node)}` only changes how Dropout/BatchNorm behave: `{event.key}`'s parameters still "
            f"require grad and are in the optimizer (over `{root}`), so they keep training.",
            f"Freeze with `{event.key}.requires_grad_(False)` and give the optimizer only the trainable parameters.",
        )
    for node in ctx.nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Attribute) \
                and node.targets[0].attr == "requires_grad" and isinstance(node.value, ast.Constant) and node.value.value is False:
            module = key_of(node.targets[0].value)
            if module is not None and ctx.is_model(module) and analysis.part_of(module, owned) and steps:
                yield ctx.finding(
                    CODE, node,
                    f"`{ctx.snippet(node)}` sets a plain attribute on the Module and freezes nothing: its parameters "
                    "still require grad and the optimizer keeps updating them.",
                    f"Use `{module}.requires_grad_(False)` and give the optimizer only the trainable parameters.",
                )


def _a_part(analysis, key: str, root: str, model_sets: list[set[str]]) -> bool:
    """Whether ``key`` is a part of what the optimizer trains, not all of it: a submodule
    (``model.backbone``, a module built into ``root``), or one of several models in one optimizer."""
    if not analysis.same(key, root):
        return True
    return any(len(models) > 1 for models in model_sets)


def _training_follows(event: ev.Event, optimizers: list[str], steps: list[ev.Event], analysis) -> bool:
    """Whether an optimizer over those parameters steps after the ``.eval()``: later in the flow, or in a loop around both."""
    for step in steps:
        if not any(analysis.same(step.key, o) for o in optimizers):
            continue
        if step.seq > event.seq:
            return True
        frame = step.frame
        while frame is not None:
            if frame.kind == "loop" and event.inside(frame):
                return True
            frame = frame.parent
    return False


def _frozen(ctx: FileContext) -> set[str]:
    """Keys whose parameters are really frozen: requires_grad_(False), or a loop setting p.requires_grad = False."""
    keys: set[str] = set()
    for node in ctx.nodes_of(ast.Call, ast.For, ast.AsyncFor):
        if isinstance(node, ast.Call) and method_name(node) == "requires_grad_" and node.args \
                and isinstance(node.args[0], ast.Constant) and node.args[0].value is False:
            key = key_of(node.func.value)  # type: ignore[attr-defined]
            if key:
                keys.add(key)
        elif isinstance(node, (ast.For, ast.AsyncFor)) and isinstance(node.iter, ast.Call) \
                and method_name(node.iter) in ("parameters", "named_parameters") and "requires_grad" in ast.unparse(node):
            key = key_of(node.iter.func.value)  # type: ignore[attr-defined]
            if key:
                keys.add(key)
    return keys
