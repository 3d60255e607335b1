"""Facts from what the code does: a value that is backpropagated carries a graph, whatever built it."""

from __future__ import annotations

import textwrap
from pathlib import Path

from trainwell.catalog import STATIC, enabled_codes
from trainwell.lint.runner import check_source

CASES = Path(__file__).resolve().parents[1] / "cases"

IMPORTLIB = '''
import importlib
import torch

lib = importlib.import_module("models.vae")
model = lib.Model()
criterion = lib.Loss()
optimizer = torch.optim.Adam(model.parameters())
loader = [torch.randn(8, 4)]
for epoch in range(3):
    total = 0
    for x in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), x)
        loss.backward()
        optimizer.step()
        total += loss
'''


def _codes(source: str) -> list[tuple[str, int]]:
    findings, problems = check_source(textwrap.dedent(source), "script.py", enabled_codes(detector=STATIC))
    assert not problems
    return [(f.code, f.line) for f in findings]


def test_a_backpropagated_loss_from_modules_of_unknown_kind_is_a_kept_graph():
    assert _codes(IMPORTLIB) == [("TW204", 17)]


def test_a_loss_summed_before_its_backward_is_the_same_graph():
    swapped = IMPORTLIB.replace("        loss.backward()\n        optimizer.step()\n        total += loss",
                                "        total += loss\n        loss.backward()\n        optimizer.step()")
    assert _codes(swapped) == [("TW204", 15)]


def test_a_value_not_backpropagated_proves_nothing():
    other = IMPORTLIB.replace("total += loss", "total += criterion(model(x), x)")
    assert ("TW204", 17) not in _codes(other)


def test_a_loss_reassigned_after_its_backward_is_not_the_backpropagated_value():
    reassigned = IMPORTLIB.replace("        total += loss", "        loss = float(loss)\n        total += loss")
    assert _codes(reassigned) == []


def test_a_detached_backpropagated_loss_is_not_kept():
    assert _codes(IMPORTLIB.replace("total += loss", "total += loss.detach()")) == []


GROUPS = '''
import torch
from torch import nn
from models import build

model = build()
optimizer = torch.optim.Adam([{"params": model.encoder.parameters(), "lr": 1e-4}, {"params": model.head.parameters()}])
data = [(torch.randn(4, 4), torch.randint(0, 2, (4,)))]
history = []
for epoch in range(3):
    for x, y in data:
        optimizer.zero_grad()
        out = model(x)
        nn.functional.cross_entropy(out, y).backward()
        optimizer.step()
        history.append(out)
'''


def test_a_model_trained_through_per_part_parameter_groups_is_the_trained_model():
    assert _codes(GROUPS) == [("TW204", 16)]


def test_parts_in_parameter_groups_prove_nothing_about_an_object_never_called():
    assert _codes(GROUPS.replace("out = model(x)", "out = model.head(model.encoder(x))")) == [("TW204", 16)]
    assert _codes(GROUPS.replace("out = model(x)", "out = run(x)")) == []


def test_a_part_of_a_wrapped_model_in_the_optimizer_makes_the_called_wrapper_the_trained_model():
    wrapped = GROUPS.replace('[{"params": model.encoder.parameters(), "lr": 1e-4}, {"params": model.head.parameters()}]',
                             "model.module.head.parameters()")
    assert _codes(wrapped) == [("TW204", 16)]


def test_lists_filled_from_named_parameters_hold_the_model():
    filled = GROUPS.replace('optimizer = torch.optim.Adam([{"params": model.encoder.parameters(), "lr": 1e-4}, {"params": model.head.parameters()}])', '''
trunk, head = [], []
for name, p in model.named_parameters():
    (head if name.startswith("head") else trunk).append(p)
optimizer = torch.optim.Adam([{"params": trunk}, {"params": head, "lr": 1e-4}])''')
    assert _codes(filled) == [("TW204", 20)]
    assert _codes(filled.replace(".append(p)", ".append(p.clone())").replace("out = model(x)", "out = run(x)")) == []


def test_a_loader_is_read_in_the_function_that_binds_it():
    """A name each function binds to its own object (`data_iter`): the loop's own assignment is its loader."""
    source = textwrap.dedent(open(CASES / "TW401" / "bad_name_bound_differently_elsewhere.py").read())
    findings, _ = check_source(source, "utils.py", {"TW401"})
    assert [(f.line, "loop at line 36" in f.message) for f in findings] == [(34, True)]
