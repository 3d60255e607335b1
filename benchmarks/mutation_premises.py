"""What the mutation operators share: their registry type, and the premises of a training step they all read."""

from __future__ import annotations

import ast
from typing import Callable, Iterator

from mutation_script import Mutant, Script, callee

Operator = Callable[[Script], Iterator["Mutant | None"]]


def registry(table: dict[str, tuple[str, Operator]]) -> Callable[[str, str], Callable[[Operator], Operator]]:
    """A decorator that enters an operator into ``table`` under its name, with the code its mutants commit."""
    def operator(code: str, name: str) -> Callable[[Operator], Operator]:
        def register(make: Operator) -> Operator:
            table[name] = (code, make)
            return make
        return register
    return operator


def training_loop(script: Script, node: ast.AST) -> ast.AST | None:
    """The innermost loop around ``node`` that holds a backward and an optimizer step."""
    return next((loop for loop in script.loops_of(node) if script.contains(loop, "backward") and script.contains_step(loop)), None)


def per_batch(script: Script, stmt: ast.stmt) -> bool:
    """Whether ``stmt`` runs once per batch: its innermost loop itself holds an optimizer step (not only a nested loop)."""
    loops = script.loops_of(stmt)
    return bool(loops) and any(isinstance(c, ast.Call) and script.is_optimizer_step(c) and script.loops_of(c)[:1] == loops[:1]
                               for c in ast.walk(loops[0]))


def siblings(script: Script, block: list[ast.stmt], test: Callable[[ast.Call], bool]) -> list[ast.Expr]:
    return [s for s in block if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and test(s.value) and script.alone(s)]


def blocks(script: Script) -> Iterator[list[ast.stmt]]:
    for node in ast.walk(script.tree):
        for name in ("body", "orelse"):
            block = getattr(node, name, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield block


def step_blocks(script: Script) -> Iterator[tuple[list[ast.stmt], ast.Expr, ast.Expr]]:
    """Blocks with exactly one backward statement followed by exactly one optimizer step statement."""
    for block in blocks(script):
        backs = siblings(script, block, lambda c: callee(c) == "backward")
        steps = siblings(script, block, script.is_optimizer_step)
        if len(backs) == 1 and len(steps) == 1 and backs[0].lineno < steps[0].lineno:
            yield block, backs[0], steps[0]


def is_loss_call(script: Script, call: ast.Call) -> bool:
    name = callee(call)
    if name in {"cross_entropy", "nll_loss", "mse_loss", "l1_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
                "smooth_l1_loss"}:
        return True
    return isinstance(call.func, ast.Name | ast.Attribute) and script.built_with(ast.unparse(call.func), LOSS_CLASSES) is not None


LOSS_CLASSES = {"CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss", "BCELoss", "BCEWithLogitsLoss", "SmoothL1Loss", "HuberLoss"}


def distributed(script: Script) -> bool:
    return any(callee(c) in {"DistributedDataParallel", "DDP"} for c in script.calls)


def assigned(script: Script, name: str) -> list[ast.AST]:
    return [n.value for n in ast.walk(script.tree) if isinstance(n, ast.Assign) and any(ast.unparse(t) == name for t in n.targets)]
