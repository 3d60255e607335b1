"""FileContext's per-class node index answers what a scan of the file would, in the same order."""

from __future__ import annotations

import ast
import textwrap

from trainwell.lint.context import FileContext

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
