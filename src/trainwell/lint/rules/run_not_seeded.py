"""TW504 (opt-in): a training program that draws random numbers and never seeds.

Premises, each read from the file: it is a program that trains (a loop with
backward and an optimizer step is reached from the module's own code, directly
or through its ``if __name__ == "__main__":`` block, not a library of
functions); it draws random numbers through torch (a model built here, whose
weights are randomly initialised; a shuffling loader; ``torch.randn`` and
friends; Dropout); and nothing in the file, nor in the project modules it
imports from, says ``seed`` (``torch.manual_seed``, ``seed_everything``,
``set_seed``, a seed read from the config or the command line, a seeded
``torch.Generator``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from trainwell.diagnostic import Finding
from trainwell.lint.context import FileContext, kwarg
from trainwell.lint.events import Frame
from trainwell.lint.rules import TRAINING
from trainwell.lint.rules._data import trains

CODE = "TW504"
REQUIRES = TRAINING
_DRAWS = {"randn", "rand", "randint", "randperm", "normal", "bernoulli", "multinomial", "rand_like", "randn_like"}


def check(ctx: FileContext) -> Iterator[Finding]:
    if "torch" not in ctx.source or _says_seed(ctx):
        return
    training = [f for f in ctx.analysis.frames if f.kind == "loop" and trains(f) and _root(f).node is ctx.tree]
    if not training:
        return  # a library or a model definition: only a program that trains has a run to replay
    if ctx.project is not None and ctx.project.mentions(ctx, ("seed",)):
        return  # a project helper it imports may seed (a `set_seed` in utils)
    draws = _random_draws(ctx)
    if not draws:
        return
    line, what, node = min(draws, key=lambda d: d[0])
    step = min(training, key=lambda f: f.node.lineno)
    yield ctx.finding(
        CODE, node,
        f"this program trains (loop at line {step.node.lineno}) and draws random numbers ({what} at line {line}) but "
        "never seeds torch: two runs of the same code and data give different models, and a failure cannot be replayed.",
        "Call torch.manual_seed(seed) (and random.seed / numpy.random.seed where they are used) at the start of the "
        "program, with the seed read from the config or the command line.",
    )


def _says_seed(ctx: FileContext) -> bool:
    """Whether a name, attribute, keyword, import or string of the code (not a docstring or comment) says seed."""
    if "seed" not in ctx.source.lower():
        return False
    docstrings = {id(n.value) for n in ctx.nodes if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    for node in ctx.nodes:
        if isinstance(node, ast.Name):
            text = node.id
        elif isinstance(node, ast.Attribute):
            text = node.attr
        elif isinstance(node, ast.keyword):
            text = node.arg or ""
        elif isinstance(node, ast.alias):
            text = node.name + " " + (node.asname or "")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            text = node.name
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            text = node.value
        else:
            continue
        if "seed" in text.lower():
            return True
    return False


def _root(frame: Frame) -> Frame:
    while frame.parent is not None:
        frame = frame.parent
    return frame


def _random_draws(ctx: FileContext) -> list[tuple[int, str, ast.AST]]:
    """(line, what, node) of each place the program draws from torch's generator (not inside class bodies: a
    module's layers are drawn where the module is built)."""
    in_classes = {id(n) for cls in ctx.classes.values() for n in ast.walk(cls)}
    found = []
    for key, role in ctx.roles.items():
        if role.kind == "model" and isinstance(role.node, ast.Call):
            found.append((role.node.lineno, f"`{key}` is built with random initial weights", role.node))
        elif role.kind == "loader" and isinstance(role.node, ast.Call):
            shuffle = kwarg(role.node, "shuffle")
            if isinstance(shuffle, ast.Constant) and shuffle.value is True:
                found.append((role.node.lineno, f"`{key}` shuffles", role.node))
    for call in ctx.calls:
        qual = ctx.call_name(call) or ""
        last = qual.rsplit(".", 1)[-1]
        if qual.startswith("torch") and (last in _DRAWS or last in ("Dropout", "dropout")):
            found.append((call.lineno, f"`{ast.unparse(call.func)}`", call))
    return [d for d in found if id(d[2]) not in in_classes]
