"""TW503 (opt-in): .item(), .cpu(), .numpy() or print(tensor) on every iteration of a GPU training loop."""

from __future__ import annotations

import ast
from typing import Iterator

from trainwell.lint import events as ev
from trainwell.lint.context import FileContext
from trainwell.lint.dataflow import Graph
from trainwell.lint.rules import TRAINING
from trainwell.diagnostic import Finding

CODE = "TW503"
REQUIRES = TRAINING


def check(ctx: FileContext) -> Iterator[Finding]:
    if "cuda" not in ctx.source:
        return  # code that never moves to a GPU has nothing to sync with
    reported: set[int] = set()
    for sync in (e for e in ctx.analysis.events if e.kind == ev.SYNC):
        frame = sync.frame
        if frame is None or frame.kind != "loop" or not any(b.frame is frame for b in frame.of(ev.BACKWARD)) or sync.periodic:
            continue
        if sync.scope is None or not isinstance(sync.node, ast.Call):
            continue
        graph = Graph(ctx, sync.scope, sync.line + 1, derived=True)
        values = sync.node.args if sync.via == "print" else [sync.arg]
        if not any(graph.connected(v) for v in values):
            continue  # not a value computed on the device (a CPU batch, a Python number)
        stmt = ctx.statement_of(sync.node) or sync.node
        if id(stmt) in reported:
            continue
        reported.add(id(stmt))
        yield ctx.finding(
            CODE, sync.node,
            f"`{ctx.snippet(sync.node)}` runs on every training step: the host waits for the GPU to finish before the "
            "next step can be queued.",
            "Accumulate on the device (`total += loss.detach()`) and read the value every N steps, e.g. inside `if step % 100 == 0:`.",
        )
