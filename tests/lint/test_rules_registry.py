"""The rules: one module per static code, named after the bug, discovered rather than listed."""

from __future__ import annotations

import sys

from trainwell.catalog import CATALOG, STATIC
from trainwell.lint.rules import all_rules


def test_every_static_code_has_exactly_one_rule_named_after_it():
    rules = all_rules()
    static = {code for code, entry in CATALOG.items() if STATIC in entry.detectors}
    assert set(rules) == static
    for code, module in rules.items():
        assert module.__name__.rsplit(".", 1)[-1] == CATALOG[code].name.replace("-", "_")
        assert module.__doc__ and module.__doc__.startswith(code)


def test_the_checker_does_not_import_torch():
    for name in list(sys.modules):
        if name.startswith("trainwell.check"):
            module = sys.modules[name]
            assert "torch" not in vars(module), name
