"""TW108: backward() on a loss built from .detach(), .data, .item() or a re-wrapped tensor."""

from __future__ import annotations

from typing import Iterator

from trainwell.lint import events as ev
from trainwell.lint.context import FileContext
from trainwell.lint.dataflow import Graph
from trainwell.lint.rules import TRAINING
from trainwell.diagnostic import Finding

CODE = "TW108"
REQUIRES = TRAINING


def check(ctx: FileContext) -> Iterator[Finding]:
    for back in (e for e in ctx.analysis.events if e.kind == ev.BACKWARD):
        if back.arg is None or back.scope is None:
            continue
        graph = Graph(ctx, back.scope, back.line)
        if graph.connected(back.arg) or not graph.cut or graph.unknown or graph.leaf:
            continue  # proof needs a cut, no path the analysis could not follow, and no leaf made to require grad on purpose
        yield ctx.finding(
            CODE, back.node,
            f"`{ctx.snippet(back.node)}`: the loss was built from a detached value (`.detach()`, `.data`, `.item()` or a new "
            "`torch.tensor`), so no gradient reaches the model's parameters and the step changes nothing.",
            "Compute the loss from the model's live outputs; keep `.detach()` / `.item()` for logging only.",
        )
