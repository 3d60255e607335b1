"""TW205: a part of the model 'frozen' with .eval() (or `module.requires_grad = False`) while its
parameters still require grad and sit in the optimizer."""

from __future__ import annotations

import ast
from typing import Iterator

from trainwell.lint import events as ev
from trainwell.lint.context import FileContext, key_of, method_name
from trainwell.lint.loops import validation_forward
from trainwell.diagnostic import Finding

CODE = "TW205"


def check(ctx: FileContext) -> Iterator[Finding]:
    analysis = ctx.analysis
    owned: set[str] = set()  # models whose parameters went, unfiltered, into an optimizer
    for key, role in ctx.roles.items():
        if role.kind == "optimizer" and isinstance(role.node, ast.Call) and "requires_grad" not in ast.unparse(role.node):
            owned |= analysis.optimizer_models(key)
    if not owned:
        return
    frozen = _frozen(ctx)
    for_validation = {id(v[1]) for e in analysis.events if validation_forward(e) for v in e.mode if isinstance(v, tuple)}
    for event in (e for e in analysis.events if e.kind == ev.EVAL and e.key):
        if id(event.node) in for_validation:
            continue  # eval for validation: TW201 / TW202 territory
        root = analysis.part_of(event.key, owned)
        if root is None or any(analysis.part_of(event.key, {f}) for f in frozen):
            continue
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
            if module is not None and ctx.is_model(module) and analysis.part_of(module, owned):
                yield ctx.finding(
                    CODE, node,
                    f"`{ctx.snippet(node)}` sets a plain attribute on the Module and freezes nothing: its parameters "
                    "still require grad and the optimizer keeps updating them.",
                    f"Use `{module}.requires_grad_(False)` and give the optimizer only the trainable parameters.",
                )


def _frozen(ctx: FileContext) -> set[str]:
    """Keys whose parameters are really frozen: requires_grad_(False), or a loop setting p.requires_grad = False."""
    keys: set[str] = set()
    for node in ctx.nodes:
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
