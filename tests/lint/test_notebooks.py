"""`trainwell check` on Jupyter notebooks: cells form one program, findings name cell and line, --fix edits only cell sources.

The fixture ``tests/cases/notebooks/train.ipynb`` is an nbformat v4 notebook
(written with nbformat) with markdown cells, line and cell magics, a shell
escape, a stored output, bugs in two cells and a ``# noqa`` in a third.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat
import pytest

from trainwell.cli import main
from trainwell.lint import notebook

ROOT = Path(__file__).resolve().parents[2]
TRAIN = ROOT / "tests" / "cases" / "notebooks" / "train.ipynb"


@pytest.fixture(autouse=True)
def _scratch_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def book(tmp_path) -> Path:
    path = tmp_path / "train.ipynb"
    shutil.copyfile(TRAIN, path)
    return path


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["check", "--no-cache", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _write_notebook(path: Path, *cells: tuple[str, str]) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(text) if kind == "code" else nbformat.v4.new_markdown_cell(text) for kind, text in cells]
    nbformat.write(nb, str(path))
    return path


def test_findings_name_the_cell_and_the_line_in_it(book, capsys):
    code, out, _ = _run(capsys, "train.ipynb")
    assert code == 1
    assert "train.ipynb:cell 5:8:9: TW101 " in out
    assert "train.ipynb:cell 5:10:9: TW204 " in out
    assert "train.ipynb:cell 6:2:9: TW502 " in out  # the body of a %%time cell is Python
    assert "cell 8" not in out  # `# noqa: TW204` in a cell silences it
    assert "syntax error" not in out  # %matplotlib, !pip and %%bash are IPython's, not Python errors
    # the message's own line numbers are the cell's too (the loop starts at line 2 of cell 5, the step is line 9)
    assert "never cleared inside this loop (line 4), so `optimizer.step()` at line 9" in out


def test_json_gains_the_cell_and_sarif_and_github_point_at_the_notebooks_line(book, capsys):
    lines = book.read_text(encoding="utf-8").splitlines()
    _, out, _ = _run(capsys, "train.ipynb", "--format", "json")
    found = {(f["code"], f["cell"], f["line"]) for f in json.loads(out)}
    assert found == {("TW101", 5, 8), ("TW204", 5, 10), ("TW502", 6, 2)}

    _, out, _ = _run(capsys, "train.ipynb", "--format", "sarif")
    results = json.loads(out)["runs"][0]["results"]
    backward = next(r for r in results if r["ruleId"] == "TW101")
    location = backward["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "train.ipynb"
    assert "loss.backward()" in lines[location["region"]["startLine"] - 1]  # the file's own line holding that source line
    assert backward["properties"]["cell"] == 5 and backward["properties"]["cellLine"] == 8
    assert backward["message"]["text"].startswith("cell 5, line 8: ")

    _, out, _ = _run(capsys, "train.ipynb", "--format", "github")
    annotation = next(line for line in out.splitlines() if "TW204" in line)
    file_line = int(annotation.split("line=")[1].split(",")[0])
    assert annotation.startswith("::error file=train.ipynb,") and "losses.append(loss)" in lines[file_line - 1]
    assert "::cell 5, line 10: " in annotation


def test_fix_changes_only_the_fixed_cells_sources(book, capsys):
    before = book.read_text(encoding="utf-8")
    code, _, err = _run(capsys, "train.ipynb", "--fix", "--unsafe-fixes")
    assert "Fixed 2 findings in 1 file" in err
    assert code == 1  # TW101 has no fix: it stays
    after = book.read_text(encoding="utf-8")
    nbformat.validate(nbformat.reads(after, as_version=4))
    old, new = json.loads(before), json.loads(after)
    changed = [i for i, (a, b) in enumerate(zip(old["cells"], new["cells"])) if a != b]
    assert changed == [4, 5]  # cells 5 and 6
    assert all({k: v for k, v in old["cells"][i].items() if k != "source"} == {k: v for k, v in new["cells"][i].items() if k != "source"}
               for i in changed)  # outputs, metadata, ids, counts of the fixed cells too
    assert "        losses.append(loss.detach())\n" in new["cells"][4]["source"]
    assert new["cells"][5]["source"] == ["%%time\n", "state = torch.load(\"model.pt\", weights_only=True)\n", "model.load_state_dict(state)"]
    # byte-identical outside the two source values: the diff is exactly those two lines
    removed = [line for line in before.splitlines() if line not in after.splitlines()]
    assert removed == ['    "        losses.append(loss)\\n",', '    "state = torch.load(\\"model.pt\\")\\n",']
    assert len(before.splitlines()) == len(after.splitlines())
    code, out, _ = _run(capsys, "train.ipynb")
    assert "TW204" not in out and "TW502" not in out and "TW101" in out


def test_fix_keeps_a_hand_laid_out_notebook_byte_identical_outside_the_cell(tmp_path, capsys):
    """A notebook not written by nbformat (compact JSON, string sources, non-ASCII text) keeps its own layout."""
    cells = [
        {"cell_type": "markdown", "id": "a", "metadata": {"tags": ["é"]}, "source": "Trainer — notes"},
        {"cell_type": "code", "id": "b", "execution_count": 1, "metadata": {}, "outputs": [], "source": "import torch\nlosses = []\n"},
        {"cell_type": "code", "id": "c", "execution_count": 2, "metadata": {"x": 1}, "outputs": [],
         "source": ["%time 1\n", "state = torch.load('m.pt')\n", "print('é')"]},
    ]
    text = json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}, ensure_ascii=False, separators=(",", ":"))
    path = tmp_path / "compact.ipynb"
    path.write_text(text, encoding="utf-8")
    start, end = notebook.parse(text).cells[1].span
    _run(capsys, "compact.ipynb", "--fix", "--unsafe-fixes")
    after = path.read_text(encoding="utf-8")
    assert after == text[:start] + '["%time 1\\n","state = torch.load(\'m.pt\', weights_only=True)\\n","print(\'é\')"]' + text[end:]
    nbformat.validate(nbformat.reads(after, as_version=4))


def test_folders_include_notebooks(tmp_path, capsys):
    (tmp_path / "pkg").mkdir()
    _write_notebook(tmp_path / "pkg" / "nb.ipynb", ("markdown", "# x"), ("code", "import torch\nstate = torch.load('m.pt')"))
    code, out, _ = _run(capsys, "pkg", "--select", "TW502")
    assert code == 1 and "pkg/nb.ipynb:cell 2:2:9: TW502" in out and "in 1 file" in out


def test_a_cell_that_does_not_parse_is_reported_at_its_cell(tmp_path, capsys):
    _write_notebook(tmp_path / "bad.ipynb", ("code", "import torch"), ("markdown", "text"), ("code", "x = 1\nfor i in range(3)\n    pass"))
    code, out, _ = _run(capsys, "bad.ipynb")
    assert code == 1 and "bad.ipynb:cell 3:2:" in out and "syntax error" in out
    _, out, _ = _run(capsys, "bad.ipynb", "--format", "json")
    [problem] = json.loads(out)
    assert (problem["name"], problem["cell"], problem["line"]) == ("syntax-error", 3, 2)
    _, out, _ = _run(capsys, "bad.ipynb", "--format", "github")
    assert out.startswith("::error file=bad.ipynb,title=syntax error::cell 3, line 2: ")  # no file line: the cell's is not one


def test_a_file_that_is_not_a_notebook_is_one_clear_line(tmp_path, capsys):
    (tmp_path / "broken.ipynb").write_text('{"cells": [', encoding="utf-8")
    (tmp_path / "old.ipynb").write_text('{"nbformat": 3, "worksheets": []}', encoding="utf-8")
    code, out, _ = _run(capsys, "broken.ipynb", "old.ipynb")
    assert code == 1
    assert "broken.ipynb:1:12: read error: not a notebook: invalid JSON" in out
    assert "old.ipynb:1:1: read error: not an nbformat v4 notebook (nbformat: 3)" in out


@pytest.mark.parametrize("source, kept", [
    ("x = (1\n     % 2)", [True, True]),  # `%` continuing an expression is Python
    ("files = !ls\nn = len(files)", [False, True]),
    ("%%time\ny = 1", [False, True]),  # %%time runs its body as Python
    ("%%bash\necho 1", [False, False]),
    ("model?\n!pip install \\\n  torch\nz = 2", [False, False, False, True]),
    ('s = """\n!not a shell line\n"""', [True, True, True]),
])
def test_ipython_lines_become_comments_and_python_stays(source, kept):
    lines, skipped = notebook.code_lines(source)
    assert [notebook.MARK not in line for line in lines] == kept
    assert len(skipped) == kept.count(False)
    compile("".join(lines), "<cell>", "exec")


def test_program_lines_map_back_to_cells():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("a = 1\nb = 2"), nbformat.v4.new_markdown_cell("m"), nbformat.v4.new_code_cell(""),
                nbformat.v4.new_code_cell("%pwd\nc = 3\n")]
    book = notebook.parse(nbformat.writes(nb))
    assert book.program.splitlines()[3] == "c = 3"
    assert [(cell.number, line) for cell, line in map(book.where, (1, 2, 3, 4))] == [(1, 1), (1, 2), (4, 1), (4, 2)]




ENGINE = """\
import torch


def train_one_epoch(model, loader, optimizer):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()


def accuracy(logits, y):
    return (logits.argmax(1) == y).float().mean().item()
"""
LOOP = """\
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(4, 4), torch.randint(0, 2, (4,)))]
total = 0.0
for epoch in range(3):
    train_one_epoch(model, data, optimizer)
    for x, y in data:
        total += accuracy(model(x), y)
"""


def test_cached_results_of_a_notebook_are_the_same_and_follow_its_helpers(tmp_path, capsys):
    """The cache keeps the cell of each finding, and a helper module the notebook imports is part of its key."""
    (tmp_path / "pyproject.toml").write_text("[tool.trainwell]\n", encoding="utf-8")
    (tmp_path / "engine.py").write_text(ENGINE, encoding="utf-8")
    nb = nbformat.v4.new_notebook()  # written on one line, sources as strings, as some tools save notebooks
    nb.cells = [nbformat.v4.new_code_cell("%pip install torch\nimport torch\nfrom torch import nn\nfrom engine import train_one_epoch, accuracy"),
                nbformat.v4.new_markdown_cell("## Train"), nbformat.v4.new_code_cell(LOOP)]
    (tmp_path / "nb.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    first = main(["check", "."]), capsys.readouterr().out
    second = main(["check", "."]), capsys.readouterr().out
    assert first == second and "nb.ipynb:cell 3:8:27: TW203" in first[1] and "TW101" not in first[1]
    assert (tmp_path / ".trainwell_cache").is_dir()
    from trainwell.lint.dependencies import Dependencies

    before = Dependencies([tmp_path / "nb.ipynb", tmp_path / "engine.py"]).digest(tmp_path / "nb.ipynb")
    (tmp_path / "engine.py").write_text(ENGINE.replace("        optimizer.zero_grad()\n", ""), encoding="utf-8")
    after = Dependencies([tmp_path / "nb.ipynb", tmp_path / "engine.py"]).digest(tmp_path / "nb.ipynb")
    assert before != after  # the notebook's cache key covers the module its cells import
    main(["check", "."])
    assert "engine.py:8:9: TW101" in capsys.readouterr().out


def test_a_later_cell_s_move_to_the_device_does_not_reach_an_earlier_cell_s_loop(tmp_path, capsys):
    """TW403: cells run top to bottom. The loop of cell 2 ran on the CPU before cell 3 moved the model; the loop of
    cell 3, after the move, leaves its labels on the CPU and is reported there, and only there."""
    setup = ("import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader, TensorDataset\n"
             "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
             "loader = DataLoader(TensorDataset(torch.randn(40, 8), torch.randint(0, 2, (40,))), batch_size=4, shuffle=True)\n"
             "model = nn.Linear(8, 2)\ncriterion = nn.CrossEntropyLoss()\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)")
    loop = "for x, y in loader:\n    optimizer.zero_grad()\n    loss = criterion(model(x), y)\n    loss.backward()\n    optimizer.step()"
    moved = ("model = model.to(device)\nfor x, y in loader:\n    x = x.to(device)\n    optimizer.zero_grad()\n"
             "    loss = criterion(model(x), y)\n    loss.backward()\n    optimizer.step()")
    path = _write_notebook(tmp_path / "cells.ipynb", ("code", setup), ("code", loop), ("code", moved))
    _, out, _ = _run(capsys, str(path))
    assert [line.split(": TW403")[0] for line in out.splitlines() if ": TW403" in line] == [f"{path}:cell 3:5:12"]


@pytest.mark.parametrize("cell", [
    "import torch\nmodel = torch.nn.Linear(2, 2)",                        # no final newline
    "for x in data:\n    y = model(x)\n        \n    y.sum()\n",            # a whitespace-only line inside a block
    "a = 1\r\n   \r\nb = 2\r\n",                                           # CRLF, a blank line of spaces
    "def f():\n    return 1\n\n\nclass A:\n    pass\n",
])
def test_a_cell_ipython_leaves_alone_is_read_without_running_ipython(cell):
    from IPython.core.inputtransformer2 import TransformerManager

    from trainwell.lint.notebook import _untouched

    assert _untouched(cell) == TransformerManager().transform_cell(cell)


@pytest.mark.parametrize("cell", ["%time f()\n", "x = !ls\n", "model?\n", ">>> a = 1\n", "In [1]: a = 1\n", "    a = 1\n",
                                  "def f():\n    ...\n"])
def test_a_cell_with_anything_for_ipython_goes_through_ipython(cell):
    from trainwell.lint.notebook import _untouched

    assert _untouched(cell) is None
