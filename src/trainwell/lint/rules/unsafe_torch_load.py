"""TW502: torch.load that may unpickle arbitrary code.

Premises: the call is ``torch.load`` with the default pickle module, and
either ``weights_only=False`` is written, or ``weights_only`` is absent while
the file may run on PyTorch < 2.6 (the target version). Silent where the code
already asked for weights-only loading (inside
``torch.serialization.safe_globals(...)``), where the caller decides
(``weights_only=weights_only``), in a fallback that runs only when the caller
passed ``weights_only=False`` (``if not weights_only:``), and where the same
function ``torch.save``d the file it loads earlier (a test reading back what it
wrote: no untrusted file). The fix, ``weights_only=True``, is never safe: a
checkpoint may hold an ``argparse.Namespace``, numpy arrays or whole pickled
modules, and then the fixed load raises."""

from __future__ import annotations

import ast
from typing import Iterator

from trainwell.lint.context import FileContext, has_star_kwargs, key_of, kwarg, walk
from trainwell.diagnostic import Edit, Finding, Fix

CODE = "TW502"
_SAFE_GLOBALS = {"torch.serialization.safe_globals"}
_FIX = "set weights_only=True (may break: a checkpoint holding argparse.Namespace, numpy arrays or pickled modules then fails to load)"


def check(ctx: FileContext) -> Iterator[Finding]:
    if "load" not in ctx.source:
        return
    loads = [n for n in ctx.calls if ctx.call_name(n) == "torch.load" and kwarg(n, "pickle_module") is None]
    if not loads:
        return
    parents = ctx.parents
    for call in loads:
        if _reads_what_it_saved(ctx, call, parents):
            continue
        weights_only = kwarg(call, "weights_only")
        if isinstance(weights_only, ast.Constant) and weights_only.value is False:
            if _caller_asked_for_unsafe(ctx, call, parents):
                continue
            yield ctx.finding(
                CODE, call,
                f"`{ctx.snippet(call)}` unpickles with weights_only=False: loading an untrusted file runs whatever code it carries.",
                "Use weights_only=True (allowlist extra classes with torch.serialization.add_safe_globals), or safetensors.",
                _replace(ctx, weights_only),
            )
        elif (weights_only is None and not has_star_kwargs(call) or _is_none(weights_only)) and ctx.target_version < (2, 6):
            if _inside_safe_globals(ctx, call, parents) or _caller_asked_for_unsafe(ctx, call, parents):
                continue
            major, minor = ctx.target_version
            yield ctx.finding(
                CODE, call,
                f"`{ctx.snippet(call)}` leaves weights_only at its default: on PyTorch < 2.6 it unpickles arbitrary code from the file, and this "
                f"code may run on PyTorch {major}.{minor} (the declared minimum, target-version, or the default when none is declared).",
                "Pass weights_only=True explicitly, or declare torch>=2.6 (pyproject.toml, requirements.txt) if older PyTorch is not supported.",
                _replace(ctx, weights_only) if weights_only is not None else _add_weights_only(ctx, call),
            )


def _is_none(value: ast.expr | None) -> bool:
    """``weights_only=None``: the default written out (False before 2.6)."""
    return isinstance(value, ast.Constant) and value.value is None


def _enclosing(node: ast.AST, parents: dict[int, ast.AST]) -> Iterator[tuple[ast.AST, ast.AST]]:
    """(ancestor, the child of it on the way to ``node``), innermost first, up to the enclosing function."""
    child = node
    while id(child) in parents and not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        parent = parents[id(child)]
        yield parent, child
        child = parent


_SAME_PATH = {"str", "os.fspath", "pathlib.Path", "Path"}  # wrappers that name the same file


def _file_argument(call: ast.Call, position: int, name: str) -> ast.expr | None:
    """The file argument, seen through ``str(path)`` / ``os.fspath(path)`` / ``Path(path)``."""
    found = call.args[position] if len(call.args) > position else kwarg(call, name)
    while (isinstance(found, ast.Call) and len(found.args) == 1 and not found.keywords
           and key_of(found.func) in _SAME_PATH):
        found = found.args[0]
    return found


def _reads_what_it_saved(ctx: FileContext, call: ast.Call, parents: dict[int, ast.AST]) -> bool:
    """The same function (or module) ``torch.save``s to the same file expression earlier: the file is its own, not untrusted."""
    source = _file_argument(call, 0, "f")
    if source is None:
        return False
    text = ctx.text(source)
    scope = next((p for p, _ in _enclosing(call, parents) if isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef))), ctx.tree)
    whole = scope is ctx.tree  # the file's own lists of calls and names: no walk of the module per load
    calls = ctx.calls if whole else [n for n in walk(scope) if isinstance(n, ast.Call)]
    saves = [n.lineno for n in calls if n.lineno < call.lineno and ctx.call_name(n) == "torch.save"
             and (target := _file_argument(n, 1, "f")) is not None and ctx.text(target) == text]
    if not saves or not isinstance(source, ast.Name):
        return bool(saves)
    names = ctx.nodes_of(ast.Name) if whole else walk(scope)
    rebound = [n.lineno for n in names if isinstance(n, ast.Name) and n.id == source.id and isinstance(n.ctx, ast.Store)]
    return any(not any(save < line < call.lineno for line in rebound) for save in saves)  # the name still holds the saved file


def _inside_safe_globals(ctx: FileContext, call: ast.Call, parents: dict[int, ast.AST]) -> bool:
    """Inside ``with torch.serialization.safe_globals(...)``: the code asked for weights-only loading."""
    for parent, child in _enclosing(call, parents):
        if isinstance(parent, (ast.With, ast.AsyncWith)) and any(child is s for s in parent.body):
            if any(isinstance(item.context_expr, ast.Call) and ctx.call_name(item.context_expr) in _SAFE_GLOBALS for item in parent.items):
                return True
    return False


def _caller_asked_for_unsafe(ctx: FileContext, call: ast.Call, parents: dict[int, ast.AST]) -> bool:
    """In code that runs only when a ``weights_only`` parameter of the enclosing function is false.

    That is the body of ``if not weights_only:``, the ``else`` of ``if weights_only:``,
    or what follows an ``if weights_only: return ...`` in the same block.
    """
    function = next((p for p, _ in _enclosing(call, parents) if isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if function is None:
        return False
    arguments = function.args
    flags = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs] if "weights_only" in a.arg}
    if not flags:
        return False
    for parent, child in _enclosing(call, parents):
        if isinstance(parent, (ast.If, ast.IfExp)):
            in_body = child is parent.body or (isinstance(parent.body, list) and any(child is s for s in parent.body))
            in_else = child is parent.orelse or (isinstance(parent.orelse, list) and any(child is s for s in parent.orelse))
            falsy, truthy = _flag_test(parent.test, flags)
            if (in_body and falsy) or (in_else and truthy):
                return True
        if isinstance(child, ast.stmt) and id(child) in ctx.blocks:
            body, index = ctx.blocks[id(child)]
            for earlier in body[:index]:
                if (isinstance(earlier, ast.If) and not earlier.orelse and _flag_test(earlier.test, flags)[1]
                        and isinstance(earlier.body[-1], (ast.Return, ast.Raise))):
                    return True
    return False


def _flag_test(test: ast.expr, flags: set[str]) -> tuple[bool, bool]:
    """(true when the flag is false, true when the flag is true) for ``not flag``, ``flag``, ``flag is False``..."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        truthy, falsy = _flag_test(test.operand, flags)
        return falsy, truthy
    if isinstance(test, ast.Name) and test.id in flags:
        return False, True
    if (isinstance(test, ast.Compare) and len(test.ops) == 1 and key_of(test.left) in flags
            and isinstance(test.comparators[0], ast.Constant) and isinstance(test.comparators[0].value, bool)):
        equal = isinstance(test.ops[0], (ast.Is, ast.Eq))
        if not equal and not isinstance(test.ops[0], (ast.IsNot, ast.NotEq)):
            return False, False
        means_false = equal != test.comparators[0].value  # `is False` / `is not True`
        return means_false, not means_false
    return False, False


def _replace(ctx: FileContext, value: ast.expr) -> Fix:
    line, end = value.lineno, value.end_lineno or value.lineno
    edit = Edit(line, ctx.char_col(line, value.col_offset), end, ctx.char_col(end, value.end_col_offset or 0), "True")
    return Fix(_FIX, (edit,), "unsafe")


def _add_weights_only(ctx: FileContext, call: ast.Call) -> Fix:
    arguments = [*call.args, *(k.value for k in call.keywords)]
    if not arguments:
        end_line = call.end_lineno or call.lineno
        column = ctx.char_col(end_line, (call.end_col_offset or 1) - 1)
        return Fix(_FIX, (Edit(end_line, column, end_line, column, "weights_only=True"),), "unsafe")
    last = max(arguments, key=lambda a: (a.end_lineno or 0, a.end_col_offset or 0))
    line = last.end_lineno or last.lineno
    column = ctx.char_col(line, last.end_col_offset or 0)
    return Fix(_FIX, (Edit(line, column, line, column, ", weights_only=True"),), "unsafe")
