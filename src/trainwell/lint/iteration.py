"""Questions the rules ask about the loop model: which loops hold training steps, and which forward passes are
evaluation rather than training.

Mixed into :class:`trainwell.lint.loops.Analysis` (the loops' frames), plus
functions of one event.
"""

from __future__ import annotations

import ast
from functools import cached_property

from trainwell.lint import events as ev
from trainwell.lint.events import Event, Frame
from trainwell.lint.syntax import walk


class Queries:
    """Step loops and enclosing frames, over the frames the walk recorded."""

    frames: list[Frame]

    @cached_property
    def step_frames(self) -> list[Frame]:
        """Innermost loops whose iteration holds both a backward() and an optimizer step."""
        both = [f for f in self.frames if f.kind == "loop" and f.has(ev.BACKWARD) and f.has(ev.STEP)]
        return [f for f in both if not any(c in both for c in self._descendants(f))]

    def _descendants(self, frame: Frame) -> list[Frame]:
        out, todo = [], list(frame.children)
        while todo:
            child = todo.pop()
            out.append(child)
            todo.extend(child.children)
        return out

    def enclosing(self, event: Event, kinds: tuple[str, ...]) -> Frame | None:
        """The innermost frame around ``event`` that holds an event of one of ``kinds`` (climbing out of helper loops such as `for p in params`)."""
        frame = event.frame
        while frame is not None and not any(e.kind in kinds for e in frame.events):
            frame = frame.parent
        return frame


def periodic_ids(event: Event) -> set[int]:
    return {id(node) for node in event.periodic}


def extra_conditions(event: Event, other: Event) -> list[tuple[int, bool]]:
    """Conditions ``event`` sits under that ``other`` does not share."""
    return [c for c in event.conds if c not in other.conds]


def _backward_after(event: Event) -> bool:
    """Whether a backward() follows ``event`` in its iteration or in any enclosing one (and not past the end of the
    run: after an ``if args.test_only: ...; sys.exit()`` branch that holds ``event``, only that branch runs)."""
    frame = event.frame
    while frame is not None:
        if any(b.kind == ev.BACKWARD and b.seq > event.seq and b.grad is not False and set(event.ends) <= set(b.conds)
               and not exclusive(event, b) and not _behind_a_closed_call(event, b) for b in frame.events):
            return True
        frame = frame.parent
    return False


def _behind_a_closed_call(event: Event, backward: Event) -> bool:
    """Whether ``backward`` runs inside a call made from ``event``'s own function that no graph of that function can
    reach (an adversarial-example helper handed the model and the batch backpropagates only what it builds)."""
    depth = len(event.sites)
    if backward.sites[:depth] != event.sites or len(backward.sites) <= depth:
        return False
    site = backward.sites[depth]
    return site.closed and site.caller is event.scope


def exclusive(event: Event, other: Event) -> bool:
    """Whether the two sit in branches of tests on one loop variable that cannot both hold in an iteration of that loop
    (``for phase in ["train", "val"]``: ``if phase == "val":`` and ``if phase == "train":``, or ``phase != "val"`` and
    ``phase != "train"`` over that list), the variable never assigned in the loop's body."""
    for name in {c[0] for t, k in event.tests for c in _tested(t.test, k)}:
        mine, theirs = _on(event, name), _on(other, name)
        if not theirs:
            continue
        loop = _loop_binding(name, event, other, tuple({id(t): t for t, _ in mine + theirs}.values()))
        if loop is None:
            continue
        if any(_contradict(a, b) for _, a in mine for _, b in theirs):
            return True
        domain = _domain(loop)
        if domain is not None and not set(_allowed(domain, mine)) & set(_allowed(domain, theirs)):
            return True
    return False


def implied(event: Event, test: ast.If, taken: bool, other: Event) -> bool:
    """Whether the branch ``(test, taken)`` that ``other`` sits in is taken in every iteration where ``event`` runs:
    ``event`` sits in it too, or ``event``'s own tests on the loop variable leave only values it allows (over
    ``for phase in ["train", "val"]``, ``phase != "val"`` leaves "train", so ``if phase == "train":`` holds)."""
    if (test, taken) in event.tests:
        return True
    needs = _tested(test.test, taken)
    if not needs or len({n[0] for n in needs}) != 1 or not _whole(test.test, taken):
        return False
    mine = _on(event, needs[0][0])
    loop = _loop_binding(needs[0][0], event, other, (test, *{id(t): t for t, _ in mine}.values())) if mine else None
    domain = _domain(loop) if loop is not None else None
    return domain is not None and all(_holds(n, value) for value in _allowed(domain, mine) for n in needs)


def _on(event: Event, name: str) -> list[tuple[ast.If, tuple[str, bool, object]]]:
    """The constraints on ``name`` that the branches ``event`` sits in put (with the ``if`` of each)."""
    return [(t, c) for t, k in event.tests for c in _tested(t.test, k) if c[0] == name]


def _domain(loop: ast.For | ast.AsyncFor) -> list[object] | None:
    """The values of ``for phase in ["train", "val"]`` (a literal list or tuple of constants), else None."""
    if isinstance(loop.iter, (ast.List, ast.Tuple)) and loop.iter.elts and all(isinstance(e, ast.Constant) for e in loop.iter.elts):
        return [e.value for e in loop.iter.elts]  # type: ignore[attr-defined]
    return None


def _allowed(domain: list[object], constraints: list[tuple[ast.If, tuple[str, bool, object]]]) -> list[object]:
    return [v for v in domain if all(_holds(c, v) for _, c in constraints)]


def _holds(constraint: tuple[str, bool, object], value: object) -> bool:
    _, equal, const = constraint
    if const is True and not isinstance(value, bool):
        return bool(value) == equal  # `if train:` on a value that is not a bool: its truth
    return (value == const) == equal


def _tested(test: ast.expr, taken: bool) -> list[tuple[str, bool, object]]:
    """The ``(name, equal, value)`` facts that hold in the branch: ``phase == "val"`` taken -> (phase, True, "val");
    its else -> (phase, False, "val"); ``if train:`` -> (train, True, True); ``a and b`` taken -> the facts of both."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _tested(test.operand, not taken)
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And if taken else ast.Or):
        return [c for value in test.values for c in _tested(value, taken)]
    if isinstance(test, ast.Name):
        return [(test.id, taken, True)]
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.NotEq)):
        left, right = test.left, test.comparators[0]
        if isinstance(right, ast.Name) and isinstance(left, ast.Constant):
            left, right = right, left
        if isinstance(left, ast.Name) and isinstance(right, ast.Constant):
            return [(left.id, taken == isinstance(test.ops[0], ast.Eq), right.value)]
    return []


def _whole(test: ast.expr, taken: bool) -> bool:
    """Whether the facts :func:`_tested` gives are the whole test (no part it could not read)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _whole(test.operand, not taken)
    if isinstance(test, ast.BoolOp):
        return isinstance(test.op, ast.And if taken else ast.Or) and all(_whole(v, taken) for v in test.values)
    return bool(_tested(test, taken))


def _contradict(a: tuple[str, bool, object], b: tuple[str, bool, object]) -> bool:
    (_, equal_a, value_a), (_, equal_b, value_b) = a, b
    if isinstance(value_a, bool) != isinstance(value_b, bool):
        return False
    if equal_a and equal_b:
        return value_a != value_b
    return equal_a != equal_b and value_a == value_b


def _loop_binding(name: str, event: Event, other: Event, tests: tuple[ast.If, ...]) -> ast.For | ast.AsyncFor | None:
    """The ``for`` loop of variable ``name`` around both events whose body holds every test and never assigns
    ``name``: the variable keeps one value for the whole iteration. None if there is none."""
    frame = event.frame
    while frame is not None:
        loop = frame.node
        if isinstance(loop, (ast.For, ast.AsyncFor)) and isinstance(loop.target, ast.Name) and loop.target.id == name \
                and other.inside(frame):
            inner = [n for stmt in loop.body for n in walk(stmt)]
            keeps = all(any(n is t for n in inner) for t in tests) and not any(
                isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, (ast.Store, ast.Del)) for n in inner)
            return loop if keeps else None
        frame = frame.parent
    return None


def validation_forward(event: Event) -> bool:
    """A forward pass whose output no later backward() can use: under no_grad, in a function no graph leaves,
    or with no backward after it."""
    return event.kind == ev.FORWARD and (event.grad is False or event.sealed or not _backward_after(event))


def training_forward(event: Event) -> bool:
    return event.kind == ev.FORWARD and not validation_forward(event)


def autograd_on(event: Event) -> bool:
    """Whether autograd is on at ``event``: on by default (``grad`` True), or in an entry point whose callers the
    analysis cannot see (``grad`` None) that calls ``backward()`` at that same level on every path to ``event``:
    no caller can have turned autograd off there, or that backward() would raise."""
    if event.grad is True:
        return True
    if event.grad is not None:
        return False
    entry = event.frame
    while entry is not None and entry.parent is not None:
        entry = entry.parent
    conds = set(event.conds)
    return entry is not None and any(b.kind == ev.BACKWARD and b.grad is None and set(b.conds) <= conds for b in entry.events)




def steady(ctx, test: ast.expr, loops: list[ast.AST]) -> bool:
    """Whether an ``if`` test keeps one value for a whole run: it calls nothing and reads only names bound at module
    level of ``ctx`` (``args.fastmode``) that no function of the file and none of ``loops`` may change. What may change
    a value (:func:`_touched`): a store to it or to a part of it, a ``global`` declaration, a parameter of that name,
    a method call on it or a call it is passed to. Such a test takes the same branch in every iteration of a loop
    around it, the last one too."""
    inner = {id(n.value) for n in walk(test) if isinstance(n, (ast.Attribute, ast.Subscript))}
    reads = {_path(n) for n in walk(test) if isinstance(n, (ast.Name, ast.Attribute, ast.Subscript)) and id(n) not in inner}
    if None in reads:
        return False
    if not reads or any(isinstance(n, (ast.Call, ast.NamedExpr, ast.Await)) for n in walk(test)):
        return False
    if not {r.partition(".")[0] for r in reads} <= _module_names(ctx):
        return False
    touched = _touched_in_functions(ctx).union(*(_touched_in(ctx, loop) for loop in loops))
    return not any(_overlap(r, t) for r in reads for t in touched)


def _touched_in(ctx, loop: ast.AST) -> set[str]:
    cache = ctx.__dict__.setdefault("_steady_loops", {})
    if id(loop) not in cache:
        cache[id(loop)] = {path for n in walk(loop) for path in _touched(n)}
    return cache[id(loop)]


def _overlap(a: str, b: str) -> bool:
    """``args`` and ``args.lr``: one is the other or a part of it."""
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


def _module_names(ctx) -> set[str]:
    cached = ctx.__dict__.get("_steady_module_names")
    if cached is None:
        cached = {n.id for stmt in ctx.tree.body if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                  for n in walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        ctx.__dict__["_steady_module_names"] = cached
    return cached


def _touched_in_functions(ctx) -> set[str]:
    cached = ctx.__dict__.get("_steady_touched")
    if cached is None:
        cached = set()
        for fn in (n for n in walk(ctx.tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))):
            cached |= {a.arg for a in walk(fn.args) if isinstance(a, ast.arg)}
            cached |= {path for n in walk(fn) for path in _touched(n)}
        ctx.__dict__["_steady_touched"] = cached
    return cached


def _touched(node: ast.AST) -> list[str]:
    """What ``node`` may change, as dotted paths: what it stores to (``x``, ``x.a``, ``x`` for ``x[i] = ``), the names
    it declares global, the receiver of a method call (``x`` for ``x.update(...)``) and what a call is handed
    (``x`` for ``f(x)``, which may set ``x.a``)."""
    if isinstance(node, ast.Global):
        return list(node.names)
    if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)):
        return [p for p in [_path(node)] if p]
    if isinstance(node, ast.Call):
        parts = [*node.args, *(k.value for k in node.keywords)] + ([node.func.value] if isinstance(node.func, ast.Attribute) else [])
        return [p for part in parts for p in [_path(part.value if isinstance(part, ast.Starred) else part)] if p]
    return []


def _path(node: ast.AST) -> str | None:
    """``x.a.b`` -> "x.a.b"; ``x[i].b`` -> "x" (an item: the whole); None when no name is at the root."""
    parts: list[str] = []
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        parts = [] if isinstance(node, ast.Subscript) else [node.attr, *parts]
        node = node.value
    return ".".join([node.id, *parts]) if isinstance(node, ast.Name) else None
