"""TW203: validation or inference forward passes with autograd on.

Two forms: a forward whose output no later ``backward()`` can use (validation,
prediction), and a forward repeated in a training loop whose output is only read
through values that carry no graph (``q.argmax().item()``, ``dist.sample()``):
RL action selection at every environment step. REINFORCE's saved log-probs keep
the graph on purpose and are not reported.
"""

from __future__ import annotations

import ast
import os
from typing import Iterator

from trainwell.lint import events as ev
from trainwell.lint.context import FileContext, key_of, kwarg
from trainwell.lint.dataflow import reaching, scope_nodes
from trainwell.lint.iteration import autograd_on, training_forward, validation_forward
from trainwell.lint.rules import TRAINING
from trainwell.lint.syntax import walk
from trainwell.diagnostic import Finding

CODE = "TW203"
REQUIRES = TRAINING
_HINT = "Wrap validation in `with torch.no_grad():` (or `torch.inference_mode()`), or decorate the helper with `@torch.no_grad()`."
# methods whose result is a number or an index, with no graph: the output's graph is dropped there. `.detach()` and
# `.data` are not among them: a value kept that way may go on into a loss (TW108's business, or a target network's).
_CUTS = {"item", "argmax", "argmin", "argsort", "tolist", "sample", "multinomial"}
# methods whose result carries the same graph on (the value is still the output)
_SAME = {"view", "reshape", "squeeze", "unsqueeze", "flatten", "softmax", "log_softmax", "sigmoid", "tanh", "exp",
         "float", "double", "cpu", "to", "cuda", "contiguous", "clone"}
_INDEXED = {"max", "min", "topk", "sort"}  # `[1]` of these is the indices: no graph
_FUNCTION_CUTS = {"argmax", "argmin", "multinomial", "argsort"}
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_DISTRIBUTIONS = {"Categorical", "Bernoulli", "OneHotCategorical", "Multinomial"}  # discrete: sample() has no graph


def check(ctx: FileContext) -> Iterator[Finding]:
    analysis = ctx.analysis
    if not any(e.kind == ev.STEP for e in analysis.events):
        return  # a program that never steps an optimizer is not a training run (demo code, tests, tutorials' one-offs)
    seen: set[int] = set()
    for forward in (e for e in analysis.events if e.kind == ev.FORWARD and autograd_on(e)):
        if id(forward.node) in seen:
            continue
        if validation_forward(forward):
            seen.add(id(forward.node))
            if _once_in_a_unit_test(ctx, forward):
                continue  # a unit test compares one output after a few steps: no validation pass, nothing repeats
            if _read_by_a_closure(ctx, forward):
                continue  # a training step defined here reads it (a style target for an engine's step): not ours to judge
            # One forward pass in a script's straight-line code (a plot, a print after training) is not repeated:
            # its graph costs one batch once. Shown with --preview only.
            once = (forward.frame is None or forward.frame.kind != "loop") and forward.scope is ctx.tree
            yield ctx.finding(
                CODE, forward.node,
                f"`{ctx.snippet(forward.node)}` runs `{forward.key}` for validation/inference with autograd on: "
                f"each call records a graph that is never used, wasting memory and time.{_caller(ctx, forward)}"
                f"{_volatile(ctx, forward)}",
                _HINT, preview=once,
            )
        elif training_forward(forward) and forward.frame is not None and forward.frame.kind == "loop" \
                and _graph_dropped(ctx.home(forward.node), forward.node, forward.scope):
            seen.add(id(forward.node))
            yield ctx.finding(
                CODE, forward.node,
                f"`{ctx.snippet(forward.node)}` runs `{forward.key}` with autograd on in the loop at line "
                f"{forward.frame.node.lineno}, but only values without a graph are kept from its output (an argmax, "
                f"`.item()`, a sample): every call records a graph that nothing backpropagates.{_volatile(ctx, forward)}",
                "Select the action under `with torch.no_grad():` (or decorate the helper with `@torch.no_grad()`).",
            )


def _read_by_a_closure(ctx: FileContext, forward: ev.Event) -> bool:
    """Whether a function defined in the forward's own scope reads its output, or a name computed from it there
    (``features = vgg(style)``, ``gram = [gram_matrix(y) for y in features]``, then ``def step(engine, batch): ...
    mse(gm_y, gram)``): the closure's use is walked apart from this scope's flow."""
    scope = forward.scope
    if scope is None or ctx.home(forward.node) is not ctx:
        return False
    nodes = scope_nodes(ctx, scope)
    closures = [n for n in nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))]
    if not closures:
        return False
    assigns = [n for n in nodes if isinstance(n, ast.Assign)]
    names: set[str] = set()
    grown = True
    while grown:  # the names assigned the output, then those assigned from them
        grown = False
        for node in assigns:
            if any(n is forward.node or isinstance(n, ast.Name) and n.id in names for n in walk(node.value)):
                new = {n.id for target in node.targets for n in walk(target) if isinstance(n, ast.Name)} - names
                names |= new
                grown = grown or bool(new)
    return bool(names) and any(names & _free_names(closure) for closure in closures)


def _free_names(fn: ast.AST) -> set[str]:
    """The names a function reads from its enclosing scope: read in it, neither its parameters nor bound in it."""
    arguments = getattr(fn, "args", None)
    bound = {a.arg for a in walk(arguments) if isinstance(a, ast.arg)} if arguments is not None else set()
    nodes = list(walk(fn))
    bound |= {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}
    return {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - bound


def _once_in_a_unit_test(ctx: FileContext, forward: ev.Event) -> bool:
    """Whether ``forward`` runs in a unit test (a ``test_*`` function of a test module, a ``TestCase`` method) or in a
    helper one calls, in no loop and no comprehension: a check of one output, not a training or inference run."""
    if forward.frame is not None and forward.frame.kind == "loop" or forward.scope is None:
        return False
    for node, scope in [(forward.node, forward.scope), *((site.call, site.caller) for site in forward.sites)]:
        parents = _parents(ctx.home(node), scope) if scope is not None else None
        while parents is not None and (node := parents.get(id(node))) is not None:
            if isinstance(node, _COMPREHENSIONS):
                return False
    return any(ctx.is_test_function(f) for f in [*(site.caller for site in forward.sites), forward.scope])


# -- where the output goes -----------------------------------------------------------------------------------------------
def _graph_dropped(ctx: FileContext, call: ast.AST, scope: ast.AST | None, depth: int = 0) -> bool:
    """Whether every use of the value ``call`` computes (a model's output) ends in a value without a graph."""
    if scope is None or depth > 6:
        return False
    parents = _parents(ctx, scope)
    node, parent = call, parents.get(id(call))
    while True:
        if isinstance(parent, ast.Attribute) and parent.value is node:
            method = parents.get(id(parent))
            if not (isinstance(method, ast.Call) and method.func is parent):
                return False
            if parent.attr in _CUTS:
                return True
            if parent.attr in _INDEXED:
                index = parents.get(id(method))
                if isinstance(index, ast.Subscript) and index.value is method and isinstance(index.slice, ast.Constant):
                    if index.slice.value == 1:
                        return True  # `.max(1)[1]`: the indices
                    node, parent = index, parents.get(id(index))
                    continue
                return False
            if parent.attr not in _SAME:
                return False
            node, parent = method, parents.get(id(method))
        elif isinstance(parent, (ast.Call, ast.keyword)):
            outer = parents.get(id(parent)) if isinstance(parent, ast.keyword) else parent
            if not isinstance(outer, ast.Call) or outer.func is node:
                return False
            last = (ctx.call_name(outer) or "").rsplit(".", 1)[-1]
            if last in _FUNCTION_CUTS:
                return True
            if last in _DISTRIBUTIONS:
                return _name_dropped(ctx, outer, scope, parents, depth, distribution=True)
            if last in _SAME and (ctx.call_name(outer) or "").startswith("torch"):
                node, parent = outer, parents.get(id(outer))
                continue
            return False
        elif isinstance(parent, ast.Subscript) and parent.value is node:
            node, parent = parent, parents.get(id(parent))  # `logits[-1, 0]`: part of the output, same graph
        elif isinstance(parent, ast.Assign):
            return _name_dropped(ctx, node, scope, parents, depth)
        else:
            return False


def _name_dropped(ctx: FileContext, value: ast.AST, scope: ast.AST, parents: _ScopeParents, depth: int,
                  distribution: bool = False) -> bool:
    """``q = model(x)`` (or ``m = Categorical(probs)``): whether every read of the name drops the graph."""
    assign = parents.get(id(value))
    if distribution:
        if not isinstance(assign, ast.Assign):
            return _distribution_use(ctx, value, scope, parents, depth)
    if not (isinstance(assign, ast.Assign) and assign.value is value and len(assign.targets) == 1):
        return False
    target = assign.targets[0]
    if isinstance(target, ast.Tuple) and not distribution and all(isinstance(t, ast.Name) for t in target.elts):
        names = [t.id for t in target.elts]  # `memory, logits = model(src)`: every part is dropped, or never read
    elif isinstance(target, ast.Name):
        names = [target.id]
    else:
        return False
    every_use = []
    for name in names:
        uses = ctx.loads(scope, name)
        if any(len(reaching(ctx, scope, name, u.lineno)) != 1 for u in uses):
            return False
        every_use += uses
    if not every_use:
        return False
    if distribution:
        return all(_distribution_use(ctx, use, scope, parents, depth) for use in every_use)
    return all(_graph_dropped(ctx, use, scope, depth + 1) for use in every_use)


def _distribution_use(ctx: FileContext, dist: ast.AST, scope: ast.AST, parents: _ScopeParents, depth: int) -> bool:
    """``m.sample()`` keeps nothing of the graph; ``m.log_prob(a)`` does (REINFORCE) unless it is dropped in turn."""
    attribute = parents.get(id(dist))
    if not (isinstance(attribute, ast.Attribute) and attribute.value is dist):
        return False
    method = parents.get(id(attribute))
    if not (isinstance(method, ast.Call) and method.func is attribute):
        return False
    if attribute.attr == "sample":
        return True
    return attribute.attr in ("log_prob", "entropy") and _graph_dropped(ctx, method, scope, depth + 1)


class _ScopeParents:
    """id(node) -> its parent, for the nodes whose parent is in ``scope``'s own body: the file's one parents map,
    read only inside the scope (a climb stops where the scope's body ends)."""

    __slots__ = ("_members", "_parents")

    def __init__(self, parents: dict[int, ast.AST], members: set[int]) -> None:
        self._parents, self._members = parents, members

    def get(self, key: int) -> ast.AST | None:
        parent = self._parents.get(key)
        return parent if parent is not None and id(parent) in self._members else None


def _parents(ctx: FileContext, scope: ast.AST) -> _ScopeParents:
    """The parents of the nodes of ``scope``'s own body (cached per scope)."""
    cache = ctx.__dict__.setdefault("_tw203_parents", {})
    found = cache.get(id(scope))
    if found is None:
        found = cache[id(scope)] = _ScopeParents(ctx.home(scope).parents, {id(n) for n in scope_nodes(ctx, scope)})
    return found


parents = _parents  # TW202 reads where a forward's output goes too
graph_dropped = _graph_dropped


def _caller(ctx: FileContext, forward: ev.Event) -> str:
    """A sentence naming the call of this file that runs the forward's function of another file (``solver.test()`` in
    main.py for ``Solver.test`` of solver.py): that call is what starts it with autograd on."""
    if ctx.home(forward.node) is ctx:
        return ""
    site = next((s for s in reversed(forward.sites) if ctx.home(s.call) is ctx), None)
    if site is None:
        return ""
    return f" `{ctx.snippet(site.call)}` at line {site.call.lineno} of {os.path.basename(ctx.path)} runs it with autograd on."


# -- Variable(volatile=True) -----------------------------------------------------------------------------------------------
def _volatile(ctx: FileContext, forward: ev.Event) -> str:
    """A sentence for a forward fed ``Variable(..., volatile=True)``, which has turned nothing off since PyTorch 0.4."""
    home, call = ctx.home(forward.node), forward.node
    if not isinstance(call, ast.Call) or forward.scope is None:
        return ""
    for arg in call.args:
        value: ast.AST | None = arg
        if isinstance(arg, ast.Name):
            values = reaching(home, forward.scope, arg.id, call.lineno)
            value = values[0] if len(values) == 1 else None
        if isinstance(value, ast.Call) and key_of(value.func) is not None \
                and (home.call_name(value) or key_of(value.func) or "").rsplit(".", 1)[-1] == "Variable":
            flag = kwarg(value, "volatile")
            if isinstance(flag, ast.Constant) and flag.value is True:
                return (" `Variable(..., volatile=True)` does not turn autograd off: `volatile` has had no effect since "
                        "PyTorch 0.4 (it only warns).")
    return ""
