"""TW204: a graph-carrying tensor is accumulated or stored without .item() / .detach()."""

from __future__ import annotations

import ast
import dataclasses
import heapq
from typing import Iterator

from trainwell.lint import events as ev
from trainwell.lint.context import FileContext, key_of, method_name
from trainwell.lint.dataflow import Graph, graph_at
from trainwell.lint.events import subst_key
from trainwell.lint.rules import TRAINING
from trainwell.diagnostic import Edit, Finding, Fix
from trainwell.lint.syntax import walk

CODE = "TW204"
REQUIRES = TRAINING
_STORES = {"append", "extend", "insert", "add", "update", "put", "appendleft"}
_KEYS = "_trainwell_tw204_keys"  # an expression's keys, kept on its node (asked per statement per pass)


def check(ctx: FileContext) -> Iterator[Finding]:
    analysis = ctx.analysis
    for event in analysis.events:
        if event.kind not in (ev.APPEND, ev.AUG, ev.ASSIGN) or event.scope is None:
            continue
        if event.key is None:  # `stats[0] += loss`: an element of an accumulator that outlives the step
            target = _target(event.node) if event.kind == ev.AUG else None
            base = key_of(target.value) if isinstance(target, ast.Subscript) else None
            if base is None:
                continue
            event = dataclasses.replace(event, key=base)
        added = _added(event)
        if added is None or event.grad is False:
            continue
        frame = _training_frame(event)
        if frame is None or not _outlives_steps(event, frame):
            continue  # not stored across training steps (an RNN unroll's list, a plot's list made fresh each time)
        graph = graph_at(ctx, event)
        if not graph.connected(added):
            continue
        target = _target(event.node)
        raw = (key_of(event.node.func.value) if isinstance(event.node, ast.Call)  # type: ignore[attr-defined]
               else key_of(target.value if isinstance(target, ast.Subscript) else target))
        if raw is None or _feeds_backward(ctx, analysis, raw):
            continue
        stmt = ctx.statement_of(event.node) or event.node
        verb = "appends" if event.kind == ev.APPEND else "adds"
        kept = (f"`{ctx.snippet(stmt)}` {verb} `{ctx.snippet(added)}` to `{raw}`, which outlives the iteration, as a "
                "tensor that carries its autograd graph")
        if not _backpropagated(ctx, frame, event, added):
            what = ", and no backward() goes through it: every step's graph stays in memory with its saved activations."
        elif event.kind == ev.APPEND:
            what = (": backward() freed the saved activations, but each kept tensor holds its step's autograd nodes, and "
                    f"`{raw}` collects tensors where numbers were meant.")
        else:
            what = (f": backward() freed the saved activations, but each step's autograd nodes join a chain that `{raw}` "
                    f"keeps alive, and `{raw}` becomes a tensor where a number was meant.")
        yield ctx.finding(
            CODE, stmt,
            kept + what,
            "Store `loss.item()` (a float) or `tensor.detach()` instead (`.item()` syncs with the GPU each step).",
            _fix(ctx, added, event.scope, event.line),
        )


def _training_frame(event: ev.Event) -> ev.Frame | None:
    """The innermost loop around the store whose iteration runs a backward or an optimizer step."""
    frame = event.frame
    while frame is not None and not (frame.kind == "loop" and (frame.has(ev.BACKWARD) or frame.has(ev.STEP))):
        frame = frame.parent
    return frame


def _backpropagated(ctx: FileContext, frame: ev.Frame, event: ev.Event, added: ast.expr) -> bool:
    """Whether a backward() of the iteration runs through the kept tensor's graph (the loss itself, or a value the
    loss is computed from): its saved activations are freed then, and only the chain of autograd nodes stays."""
    keys = {subst_key(n, event.subst) for n in walk(added) if isinstance(n, (ast.Name, ast.Attribute))} - {None}
    derived: set[str] = set()
    for key in keys:
        derived |= _derived_from(ctx, key)  # type: ignore[arg-type]
    for back in frame.of(ev.BACKWARD):
        if back.grad is False or back.arg is None:
            continue
        used = {subst_key(n, back.subst) for n in walk(back.arg) if isinstance(n, (ast.Name, ast.Attribute))}
        if used & derived:
            return True
    return False


def _outlives_steps(event: ev.Event, frame: ev.Frame) -> bool:
    """Whether the accumulator is not made afresh within each iteration of the training loop ``frame`` where it is
    stored to (``out = []`` in a helper called per step): then every step's graph piles up."""
    fresh = (ast.List, ast.Dict, ast.Tuple, ast.Constant)
    # a reset under an `if` that the store is not under (`if batch % log_interval == 0: total_loss = 0`) leaves the
    # graphs of the steps between two resets in the accumulator
    return not any(e.kind == ev.ASSIGN and e.key == event.key and isinstance(e.arg, fresh)
                   and set(e.conds) <= set(event.conds) for e in frame.events)


def _target(node: ast.AST) -> ast.AST | None:
    if isinstance(node, ast.AugAssign):
        return node.target
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        return node.targets[0]
    return None


def _added(event: ev.Event) -> ast.expr | None:
    """The value that goes into the accumulator, or None when the statement is not an accumulation."""
    node = event.node
    if event.kind == ev.APPEND:
        return event.arg  # type: ignore[return-value]
    if event.kind == ev.AUG and isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add):
        return node.value
    if event.kind == ev.ASSIGN and isinstance(node, ast.Assign) and isinstance(node.value, ast.BinOp) and isinstance(node.value.op, ast.Add):
        target = key_of(_target(node))
        if key_of(node.value.left) == target:
            return node.value.right
        if key_of(node.value.right) == target:
            return node.value.left
    return None


def _feeds_backward(ctx: FileContext, analysis, acc: str) -> bool:
    """Whether a backward() is computed from what the accumulator holds: REINFORCE's saved log-probs read back by
    a later loop, a multi-task list summed into one loss. Keys are followed file-wide, through assignments, loop
    targets, appends and calls of the file's own functions: more silence, never a wrong finding."""
    memo = analysis.__dict__.setdefault("_tw204_feeds", {})  # per accumulator: a script's stores share a few
    if acc not in memo:
        derived = _derived_from(ctx, acc)
        memo[acc] = any(derived & set(back.subst.values()) or _mentions(back.arg, derived)
                        for back in analysis.events if back.kind == ev.BACKWARD and back.arg is not None)
    return memo[acc]


def _derived_from(ctx: FileContext, acc: str) -> frozenset[str]:
    """Keys whose value may be computed from ``acc`` (a fixpoint over the file's statements), once per key and file:
    every kept tensor of a script asks about the same few keys (``loss``), and each pass reads the whole file."""
    memo = ctx.__dict__.setdefault("_tw204_derived", {})
    if acc not in memo:
        memo[acc] = _fixpoint(ctx, acc)
    return memo[acc]


def _fixpoint(ctx: FileContext, acc: str) -> frozenset[str]:
    """Pass after pass over the file's statements in order, as long as one adds a key. A statement whose values
    mention no derived key adds none: each pass reads, in order, only those that mention one when it reaches them
    (the index of :func:`_readers`), which is what a pass over every statement finds."""
    order, readers = _readers(ctx)
    derived = {acc}
    changed = True
    while changed:
        changed = False
        todo = sorted({i for key in derived for i in readers.get(key, ())})
        queued = set(todo)
        while todo:
            index = heapq.heappop(todo)
            node = order[index]
            targets: list[ast.AST] = []
            if isinstance(node, ast.Assign) and _mentions(node.value, derived):
                targets = list(node.targets)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and node.value is not None and _mentions(node.value, derived):
                targets = [node.target]
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)) and _mentions(node.iter, derived):
                targets = [node.target]
            elif isinstance(node, ast.Call) and method_name(node) in _STORES and any(_mentions(a, derived) for a in node.args):
                targets = [node.func.value]  # type: ignore[attr-defined]  # other.append(f(x)), other.extend(...)
            elif isinstance(node, ast.Call):
                targets = _parameters_fed(ctx, node, derived)
            for target in targets:
                for key in _bound(target):
                    if key not in derived:
                        derived.add(key)
                        changed = True
                        for later in readers.get(key, ()):  # read further on in this pass, as a full pass would
                            if later > index and later not in queued:
                                queued.add(later)
                                heapq.heappush(todo, later)
    return frozenset(derived)


def _readers(ctx: FileContext) -> tuple[list[ast.AST], dict[str, list[int]]]:
    """The file's statements that can pass a value on (assignments, loops, calls), in order, and for each key the
    positions of those whose values mention it."""
    found = ctx.__dict__.get("_tw204_readers")
    if found is None:
        order: list[ast.AST] = []
        readers: dict[str, list[int]] = {}
        for node in ctx.nodes:
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                values = [node.value] if node.value is not None else []
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                values = [node.iter]
            elif isinstance(node, ast.Call):
                values = [*node.args, *(k.value for k in node.keywords)]
            else:
                continue
            keys = set().union(*(_keys_in(v) for v in values))
            if keys:
                for key in keys:
                    readers.setdefault(key, []).append(len(order))
                order.append(node)
        found = ctx.__dict__["_tw204_readers"] = (order, readers)
    return found


def _keys_in(expr: ast.AST) -> frozenset[str]:
    """The keys of the names and attribute chains in ``expr`` (``self.x.y``, ``self.x``, ``self``), kept on the node."""
    found = expr.__dict__.get(_KEYS)
    if found is None:
        found = frozenset(key for n in walk(expr) if isinstance(n, (ast.Name, ast.Attribute)) and (key := key_of(n)) is not None)
        expr.__dict__[_KEYS] = found
    return found


def _bound(target: ast.AST) -> list[str]:
    """The keys a store into ``target`` changes: ``a, (b, c)`` -> a, b, c; ``hist[phase]`` -> hist (the index
    ``phase`` is read, not written); ``self.losses`` -> self.losses (not ``self``)."""
    if isinstance(target, (ast.Tuple, ast.List)):
        return [key for element in target.elts for key in _bound(element)]
    if isinstance(target, ast.Starred):
        return _bound(target.value)
    if isinstance(target, ast.Subscript):
        return _bound(target.value)
    key = key_of(target) if isinstance(target, (ast.Name, ast.Attribute)) else None
    return [key] if key is not None else []


def _parameters_fed(ctx: FileContext, call: ast.Call, derived: set[str] | frozenset[str]) -> list[ast.AST]:
    """The parameters of a function of this file that receive a derived argument (as Name nodes)."""
    name = key_of(call.func)
    fn = ctx.functions.get(name or "") or ctx.nested_functions.get(name or "")
    if fn is None and isinstance(call.func, ast.Attribute):
        fn = next((ms[call.func.attr] for ms in ctx.methods.values() if call.func.attr in ms), None)
    if fn is None:
        return []
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    if params and params[0] == "self" and isinstance(call.func, ast.Attribute):
        params = params[1:]
    fed = [p for p, a in zip(params, call.args) if _mentions(a, derived)]
    fed += [k.arg for k in call.keywords if k.arg and _mentions(k.value, derived)]
    return [ast.Name(id=p) for p in fed]


def _mentions(expr: ast.AST, keys: set[str] | frozenset[str]) -> bool:
    return not _keys_in(expr).isdisjoint(keys)


def _fix(ctx: FileContext, added: ast.expr, scope: ast.AST, line: int) -> Fix | None:
    """Append ``.detach()`` to the one graph-carrying name in the accumulated value.

    ``.detach()`` rather than ``.item()``: it keeps the value a tensor, so later
    uses (``torch.stack(losses)``, ``total.item()``) still work; the fix is safe.
    """
    names = [n for n in walk(added) if isinstance(n, ast.Name) and Graph(ctx, scope, line + 1).connected(n)]
    if len(names) != 1:
        return None
    name = names[0]
    line_no = name.end_lineno or name.lineno
    column = ctx.char_col(line_no, name.end_col_offset or 0)
    return Fix(f"use `{name.id}.detach()`", (Edit(line_no, column, line_no, column, ".detach()"),), "safe")
