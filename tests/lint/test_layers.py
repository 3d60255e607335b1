"""The checker's modules import in one direction: no circle, not even through an import inside a function."""

from __future__ import annotations

import ast
from pathlib import Path

import trainwell.lint

LINT = Path(trainwell.lint.__file__).parent
FACTS = ("syntax", "roles", "context", "events", "dataflow", "ownership", "callees", "iteration", "loops", "facts", "index",
         "outputs", "moves", "dependencies", "bindings", "constants")


def _module(path: Path) -> str:
    parts = path.relative_to(LINT.parent.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _graph() -> dict[str, set[str]]:
    files = {_module(p): p for p in LINT.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        found: set[str] = set()
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join([*package.split(".")[: len(package.split(".")) - node.level + 1], *([base] if base else [])])
                found.add(base)
                found.update(f"{base}.{a.name}" for a in node.names)
        graph[name] = {m for m in found if m in files and m != name}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for child in sorted(graph[node]):
            if state.get(child) == 1:
                return path[path.index(child):] + [child]
            if child not in state and (found := visit(child)):
                return found
        state[node] = 2
        path.pop()
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []


def test_no_module_of_the_checker_imports_itself_back():
    assert _cycle(_graph()) == []


def test_the_finder_sees_a_circle_through_a_lazy_import(tmp_path):
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_the_facts_layer_never_asks_a_rule_or_the_runner():
    graph = _graph()
    for name in FACTS:
        module = f"trainwell.lint.{name}"
        assert not {m for m in graph[module] if m.startswith("trainwell.lint.rules") or m.endswith((".runner", ".cli"))}, module
