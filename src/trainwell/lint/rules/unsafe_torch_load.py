"""TW502: torch.load that may unpickle arbitrary code."""

from __future__ import annotations

import ast
from typing import Iterator

from trainwell.lint.context import FileContext, has_star_kwargs, kwarg
from trainwell.diagnostic import Edit, Finding, Fix

CODE = "TW502"


def check(ctx: FileContext) -> Iterator[Finding]:
    if "load" not in ctx.source:
        return
    for call in (n for n in ctx.nodes if isinstance(n, ast.Call)):
        if ctx.call_name(call) != "torch.load" or kwarg(call, "pickle_module") is not None:
            continue
        weights_only = kwarg(call, "weights_only")
        if isinstance(weights_only, ast.Constant) and weights_only.value is False:
            yield ctx.finding(
                CODE, call,
                f"`{ctx.snippet(call)}` unpickles with weights_only=False: loading an untrusted file runs whatever code it carries.",
                "Use weights_only=True (allowlist extra classes with torch.serialization.add_safe_globals), or safetensors.",
                _replace(ctx, weights_only),
            )
        elif weights_only is None and not has_star_kwargs(call) and ctx.target_version < (2, 6):
            major, minor = ctx.target_version
            yield ctx.finding(
                CODE, call,
                f"`{ctx.snippet(call)}` has no weights_only: on PyTorch < 2.6 (this project targets {major}.{minor}) it unpickles "
                "arbitrary code from the file.",
                "Pass weights_only=True explicitly (or set target-version to 2.6 if older PyTorch is not supported).",
                _add_weights_only(ctx, call),
            )


def _replace(ctx: FileContext, value: ast.expr) -> Fix:
    line, end = value.lineno, value.end_lineno or value.lineno
    edit = Edit(line, ctx.char_col(line, value.col_offset), end, ctx.char_col(end, value.end_col_offset or 0), "True")
    return Fix("set weights_only=True (fails on files that really pickle objects)", (edit,), "unsafe")


def _add_weights_only(ctx: FileContext, call: ast.Call) -> Fix | None:
    arguments = [*call.args, *(k.value for k in call.keywords)]
    if not arguments:
        end_line = call.end_lineno or call.lineno
        column = ctx.char_col(end_line, (call.end_col_offset or 1) - 1)
        return Fix("add weights_only=True", (Edit(end_line, column, end_line, column, "weights_only=True"),), "safe")
    last = max(arguments, key=lambda a: (a.end_lineno or 0, a.end_col_offset or 0))
    line = last.end_lineno or last.lineno
    column = ctx.char_col(line, last.end_col_offset or 0)
    return Fix("add weights_only=True", (Edit(line, column, line, column, ", weights_only=True"),), "safe")
