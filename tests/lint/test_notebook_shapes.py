"""Valid notebooks as Jupyter reads them: common-indent cells, magic-only blocks, prompts, raw cells, errors in the right cell.

Each shape is checked twice: with IPython's own input transformer (the
``notebooks`` extra) and with the fallback used where IPython is missing
(a pre-commit hook's environment).
"""

from __future__ import annotations

import json

import nbformat
import pytest

from trainwell.cli import main
from trainwell.lint import notebook

LOAD = "state = torch.load('m.pt')\n"


@pytest.fixture(params=["ipython", "fallback"])
def reader(request, monkeypatch, tmp_path):
    if request.param == "ipython":
        pytest.importorskip("IPython.core.inputtransformer2")
    else:
        monkeypatch.setattr(notebook, "_ipython_transformer", lambda: None)
    monkeypatch.chdir(tmp_path)
    return request.param


def _check(tmp_path, capsys, *cells, fmt: str = "text") -> tuple[int, str]:
    nb = nbformat.v4.new_notebook()
    makers = {"code": nbformat.v4.new_code_cell, "markdown": nbformat.v4.new_markdown_cell, "raw": nbformat.v4.new_raw_cell}
    nb.cells = [makers[kind](text) for kind, text in cells]
    nbformat.write(nb, str(tmp_path / "nb.ipynb"))
    code = main(["check", "--no-cache", "--format", fmt, "nb.ipynb"])
    return code, capsys.readouterr().out


def test_a_cell_indented_by_one_space_parses_and_reports_its_own_column(reader, tmp_path, capsys):
    code, out = _check(tmp_path, capsys, ("code", " import torch\n " + LOAD), ("code", "  import torch\n  x = 1\n  " + LOAD))
    assert "syntax error" not in out, out
    assert "nb.ipynb:cell 1:2:10: TW502" in out and "nb.ipynb:cell 2:3:11: TW502" in out, out  # columns in the cell as written


def test_a_block_whose_body_is_only_magics_parses(reader, tmp_path, capsys):
    cells = [("code", "import torch\nif True:\n    %load_ext tensorboard\n    %tensorboard --logdir runs\n"),
             ("code", "for i in range(2):\n    !nvidia-smi\n" + LOAD), ("code", "files = !ls\n%matplotlib inline")]
    code, out = _check(tmp_path, capsys, *cells)
    assert "syntax error" not in out and "nb.ipynb:cell 2:3:9: TW502" in out, out


def test_prompts_help_and_leading_blank_lines_map_back_exactly(reader, tmp_path, capsys):
    code, out = _check(tmp_path, capsys, ("code", "\n\nimport torch\nmodel?\n" + LOAD))
    assert "nb.ipynb:cell 1:5:9: TW502" in out, out


def test_raw_and_markdown_cells_are_not_python(reader, tmp_path, capsys):
    code, out = _check(tmp_path, capsys, ("raw", "this is { not python"), ("markdown", "# title\n    indented"), ("code", "import torch\n" + LOAD))
    assert code == 1 and "syntax error" not in out and "nb.ipynb:cell 3:2:9: TW502" in out, out


@pytest.mark.parametrize("cells, where", [
    ([("code", "import torch\ndef f():\n"), ("code", "x = 1\n")], "cell 1:2:"),  # Python alone blames the next cell's line
    ([("code", "import torch\n"), ("code", "x = (1,\n"), ("code", "y = 2\n")], "cell 2:1:"),
    ([("code", "import torch\n"), ("markdown", "m"), ("code", " a = 1\n  b = 2\n")], "cell 3:2:"),
])
def test_a_syntax_error_names_the_cell_that_does_not_parse(reader, tmp_path, capsys, cells, where):
    code, out = _check(tmp_path, capsys, *cells)
    assert code == 1 and f"nb.ipynb:{where}" in out and "syntax error" in out, out
    _, data = _check(tmp_path, capsys, *cells, fmt="json")
    assert [item["cell"] for item in json.loads(data)] == [int(where.split()[1].split(":")[0])]


def test_a_fix_in_an_indented_cell_keeps_the_indent(reader, tmp_path, capsys):
    path = tmp_path / "nb.ipynb"
    _check(tmp_path, capsys, ("code", " import torch\n %matplotlib inline\n x = torch.load('m.pt', weights_only=False)\n"))
    assert main(["check", "--no-cache", "--fix", "--unsafe-fixes", "nb.ipynb"]) == 0, capsys.readouterr()
    source = "".join(json.loads(path.read_text(encoding="utf-8"))["cells"][0]["source"])
    assert source == " import torch\n %matplotlib inline\n x = torch.load('m.pt', weights_only=True)\n"
