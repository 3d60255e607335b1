"""FileContext's per-class node index answers what a scan of the file would, in the same order."""

from __future__ import annotations

import ast
import textwrap

from trainwell.lint.context import FileContext, key_of

SOURCE = textwrap.dedent('''
    import torch
    x = torch.zeros(3)
    def train(model, loader, opt):
        for a, b in loader:
            loss = model(a).sum()
            loss.backward()
            opt.step()
            def inner():
                return torch.ones(1)
        total = [y for y in range(3)]
    for i in range(2):
        train(None, [], None)
''')


def test_nodes_of_and_members_of_equal_a_scan_in_order():
    ctx = FileContext("t.py", SOURCE, ast.parse(SOURCE))
    for kinds in [(ast.Call,), (ast.For, ast.Assign), (ast.Assign, ast.Expr, ast.AugAssign), (ast.While,)]:
        assert ctx.nodes_of(*kinds) == [n for n in ctx.nodes if isinstance(n, kinds)]
        for scope in (ctx.tree, ctx.functions["train"], ctx.nested_functions["inner"]):
            assert ctx.members_of(scope, *kinds) == [n for n in ctx.members(scope) if isinstance(n, kinds)]
    assert len(ctx.nodes_of(ast.For)) == 2 and ctx.members_of(ctx.nested_functions["inner"], ast.For) == []


def test_parents_name_the_node_each_child_sits_in():
    ctx = FileContext("t.py", SOURCE, ast.parse(SOURCE))
    for node in ctx.nodes:
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.expr_context):
                assert ctx.parents[id(child)] is node
    assert all(ctx.parents[id(stmt)] is ctx.tree for stmt in ctx.tree.body)


TRICKY = textwrap.dedent('''
    import torch
    a, (b, c) = 1, (2, 3)
    d = [e for e in range(3) if (f := e)]
    g = lambda: [h for h in range(2)]
    print(i := 4)
    with open("x") as (j, k):
        pass
    for l, m in zip([], []):
        n = 1
    def fn(p):
        q = p.step()
        try:
            r = 1
        except ValueError as err:
            s = 2
        return q
    if True:
        t = torch.zeros(1).sum()
        t.backward()
    t.backward()
''')


def _walked(stmt: ast.stmt) -> list[ast.Name]:
    """What the loop model read before the index: every Name stored anywhere in a simple statement."""
    return [n for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]


def test_stored_names_of_a_simple_statement_equal_a_walk_of_it():
    ctx = FileContext("t.py", TRICKY, ast.parse(TRICKY))
    simple = [n for n in ctx.nodes if isinstance(n, ast.stmt) and not isinstance(n, (
        ast.For, ast.AsyncFor, ast.While, ast.If, ast.With, ast.AsyncWith, ast.Try, ast.FunctionDef, ast.ClassDef))]
    assert len(simple) > 10
    for stmt in simple:
        assert {id(n) for n in ctx.stored_names(stmt)} == {id(n) for n in _walked(stmt)}
    assert {n.id for stmt in ctx.tree.body for n in ctx.stored_names(stmt)} >= {"a", "b", "c", "d", "e", "f", "h", "i"}


def test_statement_of_a_call_is_its_expression_statement_inside_a_block():
    ctx = FileContext("t.py", TRICKY, ast.parse(TRICKY))
    backwards = [n for n in ctx.nodes_of(ast.Call) if isinstance(n.func, ast.Attribute) and n.func.attr == "backward"]
    inside, top = sorted(backwards, key=lambda n: n.lineno)
    assert ctx.statement_of(inside) is ctx.parents[id(inside)] and id(ctx.statement_of(inside)) in ctx.blocks
    assert ctx.statement_of(top) is None  # a module-level statement is in no block the reordering fix moves within
    step = next(n for n in ctx.nodes_of(ast.Call) if isinstance(n.func, ast.Attribute) and n.func.attr == "step")
    assert ctx.statement_of(step) is None  # the value of an assignment, not a statement of its own


def test_a_scopes_parents_stop_where_its_own_body_ends():
    from trainwell.lint.rules.no_grad_missing import parents

    ctx = FileContext("t.py", TRICKY, ast.parse(TRICKY))
    for scope in (ctx.tree, ctx.functions["fn"], *ctx.nodes_of(ast.Lambda)):
        own = {id(n) for n in ctx.members(scope)}
        expected = {id(child): node for node in ctx.members(scope) for child in ast.iter_child_nodes(node)
                    if not isinstance(child, ast.expr_context)}
        found = parents(ctx, scope)
        for node in ctx.nodes:
            assert found.get(id(node)) is expected.get(id(node)), (ast.dump(node)[:60], id(node) in own)
    lam = ctx.nodes_of(ast.Lambda)[0]
    assert parents(ctx, lam).get(id(lam.body)) is None  # the lambda itself belongs to the module's body, not its own


def _full_passes(ctx, acc):
    """TW204's keys derived from ``acc`` the way it first found them: every statement of the file, pass after pass."""
    from trainwell.lint.rules import loss_tensor_kept as rule

    derived, changed = {acc}, True
    while changed:
        changed = False
        for node in ctx.nodes:
            targets = []
            if isinstance(node, ast.Assign) and rule._mentions(node.value, derived):
                targets = list(node.targets)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and node.value is not None and rule._mentions(node.value, derived):
                targets = [node.target]
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)) and rule._mentions(node.iter, derived):
                targets = [node.target]
            elif isinstance(node, ast.Call) and rule.method_name(node) in rule._STORES and any(rule._mentions(a, derived) for a in node.args):
                targets = [node.func.value]
            elif isinstance(node, ast.Call):
                targets = rule._parameters_fed(ctx, node, derived)
            for key in [k for t in targets for k in rule._bound(t)]:
                if key not in derived:
                    derived.add(key)
                    changed = True
    return derived


def test_tw204s_derived_keys_equal_full_passes_over_the_file():
    """TW204 reads, per pass, only the statements that mention a derived key (a long script's passes were quadratic)."""
    from pathlib import Path

    from trainwell.lint.rules.loss_tensor_kept import _derived_from

    root = Path(__file__).resolve().parents[1]
    meter = textwrap.dedent('''
        class Meter:
            def update(self, val, n=1):
                self.sum += val * n
        meter, hist = Meter(), []
        for x in data:
            loss = model(x).mean()
            meter.update(loss, n=len(x))
            meter.update(val=loss)
            hist.append(loss)
            total = sum(h for h in hist)
            later = total * 2
    ''')
    texts = [meter] + [p.read_text(encoding="utf-8") for p in sorted((root / "cases").glob("TW20[0-9]/*.py"))]
    compared = 0
    for text in texts:
        ctx = FileContext("t.py", text, ast.parse(text))
        keys = {k for n in ctx.nodes if isinstance(n, (ast.Name, ast.Attribute)) and (k := key_of(n)) is not None}
        for key in sorted(keys):
            assert _derived_from(ctx, key) == _full_passes(ctx, key), (text[:60], key)
            compared += len(_derived_from(ctx, key)) > 1
    assert compared > 100  # keys that pass their value on, not only keys that stay alone


def test_reaching_and_backpropagated_equal_scans_of_every_assignment():
    """Where each use of a name stands among its assignments is found by bisection, and which backwards share its
    assignments once per name (a script reusing ``loss`` in many loops was cubic); both answer what the scans did."""
    from pathlib import Path

    from trainwell.lint import dataflow

    def reaching_scan(ctx, scope, name, line):
        out = []
        for def_line, value in reversed(dataflow.definitions(ctx, scope).get(name, [])):
            if def_line >= line:
                continue
            out.append(value)
            if not isinstance(value, ast.AugAssign):
                break
        return out

    def backpropagated_scan(ctx, scope, use, values):
        tensors = dataflow._backpropagated_names(ctx, scope).get(use.id)
        plain = next((v for v in values if not isinstance(v, ast.AugAssign)), None)
        if not tensors or isinstance(plain, (ast.For, ast.AsyncFor)):
            return False
        for tensor in tensors:
            there = reaching_scan(ctx, scope, use.id, tensor.lineno)
            if tensor is not use and next((v for v in there if not isinstance(v, ast.AugAssign)), None) is plain \
                    and len(there) == len(values):
                return True
        return False

    root = Path(__file__).resolve().parents[1]
    texts = [p.read_text(encoding="utf-8") for p in sorted((root / "cases").glob("TW1*/*.py")) + sorted((root / "cases").glob("TW2*/*.py"))]
    asked = proven = 0
    for text in texts:
        ctx = FileContext("t.py", text, ast.parse(text))
        for scope in [ctx.tree, *ctx.functions.values()]:
            for use in [n for n in ctx.members(scope) if isinstance(n, ast.Name)]:
                values = reaching_scan(ctx, scope, use.id, use.lineno)
                assert dataflow.reaching(ctx, scope, use.id, use.lineno) == values
                found = dataflow.backpropagated(ctx, scope, use, values)
                assert found == backpropagated_scan(ctx, scope, use, values), (text[:60], use.id, use.lineno)
                asked += 1
                proven += found
    assert asked > 5000 and proven > 100  # many uses, and many proven to carry a graph
