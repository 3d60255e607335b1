"""`%load_ext trainwell` in a real IPython InteractiveShell: `%%watch` watches one cell, `%watch on|off` every cell after it."""

from __future__ import annotations

import pytest

pytest.importorskip("IPython")
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402

from trainwell.runtime.notebook_magic import FindingsTable  # noqa: E402

SETUP = """\
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
"""
BUGGY = """\
for step in range(4):
    loss = model(torch.randn(8, 4)).pow(2).mean()
    loss.backward()
    optimizer.step()
"""
CORRECT = """\
for step in range(4):
    optimizer.zero_grad()
    loss = model(torch.randn(8, 4)).pow(2).mean()
    loss.backward()
    optimizer.step()
"""


@pytest.fixture
def shell():
    InteractiveShell.clear_instance()
    ip = InteractiveShell.instance()
    ip.run_cell("%load_ext trainwell", store_history=False).raise_error()
    ip.run_cell(SETUP).raise_error()
    yield ip
    InteractiveShell.clear_instance()


def _magics(ip):
    return ip.magics_manager.registry["WatchMagics"]


def test_watch_cell_magic_reports_the_bug_under_the_cell(shell, capsys):
    import torch

    original_backward = torch.Tensor.backward
    shell.run_cell("%%watch\n" + BUGGY).raise_error()
    out = capsys.readouterr().out
    [finding] = _magics(shell).last
    assert (finding.code, finding.line) == ("TW101", 4)  # the backward() line, counted in the cell as shown (line 1: %%watch)
    assert "line 4: TW101 zero-grad-missing (step 2" in out and "hint: call optimizer.zero_grad()" in out  # terminal: text
    assert torch.Tensor.backward is original_backward  # every hook removed when the cell ends
    table = FindingsTable(_magics(shell).last, finding.path, 4)
    data, _ = shell.display_formatter.format(table)  # what Jupyter receives: the HTML table beside the text
    assert "<td><code>TW101</code></td>" in data["text/html"] and "hint: call optimizer.zero_grad()" in data["text/html"]
    assert data["text/plain"].startswith("trainwell: 1 finding(s) in 4 training step(s)")

    shell.run_cell("%%watch\n" + CORRECT).raise_error()
    assert _magics(shell).last == [] and "TW101" not in capsys.readouterr().out


def test_watch_on_watches_every_later_cell_until_off(shell, capsys):
    shell.run_cell("%watch on --select TW1").raise_error()
    shell.run_cell(CORRECT).raise_error()
    assert _magics(shell).last == []
    shell.run_cell(BUGGY).raise_error()
    assert [(f.code, f.line) for f in _magics(shell).last] == [("TW101", 3)]
    assert "line 3: TW101 zero-grad-missing" in capsys.readouterr().out  # named as a line of this cell
    shell.run_cell("%watch off").raise_error()
    shell.run_cell(BUGGY).raise_error()
    assert "TW101" not in capsys.readouterr().out  # off: nothing watched


def test_bad_options_are_one_usage_line(shell, capsys):
    result = shell.run_cell("%%watch --select TW999\nx = 1")
    assert result.error_in_exec is not None and "TW999" in str(result.error_in_exec)
    assert shell.user_ns.get("x") is None  # the cell did not run
    result = shell.run_cell("%watch maybe")
    assert "use `%watch on`" in str(result.error_in_exec)
