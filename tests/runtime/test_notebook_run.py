"""`trainwell run nb.ipynb`: the code cells run in order in one process under the watcher; findings name cell and line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat

SETUP = "import sys\nimport torch\nfrom torch import nn\ntorch.manual_seed(0)\nmodel = nn.Linear(4, 2)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)"
LOOP = "for step in range(4):\n    loss = model(torch.randn(8, 4)).pow(2).mean()\n    loss.backward()\n    optimizer.step()\nprint('argv', sys.argv[1:], __name__)"


def _notebook(path: Path, *cells: tuple[str, str]) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(text) if kind == "code" else nbformat.v4.new_markdown_cell(text) for kind, text in cells]
    nbformat.write(nb, str(path))
    return path


def trainwell_run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", "import sys; from trainwell.cli import main; sys.exit(main())", "run", *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120, start_new_session=True)


def test_cells_run_in_order_and_findings_name_the_cell(tmp_path: Path) -> None:
    _notebook(tmp_path / "nb.ipynb", ("markdown", "# Training"), ("code", "%matplotlib inline\n!echo from-the-shell\n" + SETUP),
              ("markdown", "## Loop"), ("code", LOOP), ("code", "%%bash\necho never"), ("code", "print('last cell ran', step)\ndisplay({'steps': step + 1})"))
    done = trainwell_run("--report", "out.json", "nb.ipynb", "--epochs", "2", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "argv ['--epochs', '2'] __main__" in done.stdout and "last cell ran 3" in done.stdout  # one namespace, in order
    assert "{'steps': 4}" in done.stdout  # Jupyter's display(), which notebooks use without an import
    assert "from-the-shell" not in done.stdout and "never" not in done.stdout
    assert "nb.ipynb:cell 2: skipped what only IPython runs: %matplotlib inline; !echo from-the-shell" in done.stderr
    assert "nb.ipynb:cell 5: skipped what only IPython runs: %%bash; echo never" in done.stderr
    assert "nb.ipynb:cell 4:3: TW101 zero-grad-missing (step 2)" in done.stderr  # the backward() line of cell 4
    [finding] = json.loads((tmp_path / "out.json").read_text())["findings"]
    assert (finding["code"], finding["path"], finding["line"]) == ("TW101", f"{tmp_path / 'nb.ipynb'}:cell 4", 3)


def test_a_failing_cell_stops_the_run_with_its_traceback(tmp_path: Path) -> None:
    _notebook(tmp_path / "nb.ipynb", ("code", "x = 1"), ("markdown", "m"), ("code", "y = 2\nraise KeyError('lost')"), ("code", "print('after')"))
    done = trainwell_run("nb.ipynb", cwd=tmp_path)
    assert done.returncode == 1 and "after" not in done.stdout
    assert "nb.ipynb:cell 3\", line 2" in done.stderr and "raise KeyError('lost')" in done.stderr and "KeyError: 'lost'" in done.stderr


def test_a_cell_that_does_not_parse_stops_before_anything_runs(tmp_path: Path) -> None:
    _notebook(tmp_path / "nb.ipynb", ("code", "print('first')"), ("code", "for i in range(3)\n    pass"))
    done = trainwell_run("nb.ipynb", cwd=tmp_path)
    assert done.returncode == 1 and "first" not in done.stdout
    assert done.stderr.strip().splitlines() == ["trainwell: error: nb.ipynb:cell 2:1: the notebook does not parse: expected ':'"]
