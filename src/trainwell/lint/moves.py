"""The reordering fix: move one statement within its block, as text, keeping its lines as written."""

from __future__ import annotations

import ast

from trainwell.lint.context import FileContext
from trainwell.diagnostic import Edit, Fix


def _own_lines(ctx: FileContext, stmt: ast.stmt) -> bool:
    """Whether ``stmt`` alone fills its lines (no `a(); b()` on one line)."""
    first = ctx.lines[stmt.lineno - 1]
    last = ctx.lines[stmt.end_lineno - 1]  # type: ignore[operator]
    before = first.encode()[: stmt.col_offset].decode(errors="ignore")
    after = last.encode()[stmt.end_col_offset:].decode(errors="ignore").strip()  # type: ignore[misc]
    return not before.strip() and (not after or after.startswith("#"))


def move(ctx: FileContext, node: ast.AST, anchor: ast.AST, after: bool, message: str, applicability: str = "safe") -> Fix | None:
    """Move the statement of ``node`` just after (or before) the statement of ``anchor``, in the same block."""
    stmt, target = ctx.statement_of(node), ctx.statement_of(anchor)
    if stmt is None or target is None:
        return None
    here, there = ctx.blocks.get(id(stmt)), ctx.blocks.get(id(target))
    if here is None or there is None or here[0] is not there[0] or stmt is target:
        return None
    if not (_own_lines(ctx, stmt) and _own_lines(ctx, target)):
        return None
    text = "".join(line + "\n" for line in ctx.lines[stmt.lineno - 1: stmt.end_lineno])
    delete = Edit(stmt.lineno, 0, stmt.end_lineno + 1, 0, "")  # type: ignore[operator]
    line = target.end_lineno + 1 if after else target.lineno  # type: ignore[operator]
    insert = Edit(line, 0, line, 0, text)
    return Fix(message, (delete, insert) if stmt.lineno < line else (insert, delete), applicability)  # type: ignore[arg-type]
