"""Run a Jupyter notebook's code cells in order, in one process, as "Run All" would, without a Jupyter server.

Each cell is compiled under the file name ``nb.ipynb:cell N`` (N counts every
cell from 1, as ``trainwell check`` does), so the runtime checker, which
reports the user's frame by file name and line, names the cell and the line
in it, and a traceback shows the cell's lines. Lines only IPython can run
(``%magic``, ``!shell``, a ``%%bash`` cell) are skipped with a one-line
notice per cell; everything else runs in one ``__main__`` namespace, which
has Jupyter's ``display()`` (printing each object's text form). The first
cell that raises stops the run, as it stops "Run All".
"""

from __future__ import annotations

import linecache
import os
import sys

from trainwell.errors import TrainwellError
from trainwell.lint import notebook
from trainwell.lint.source_file import ReadError
from trainwell.runtime.script import run_as_main
from trainwell.runtime.watcher import watch


def compiled_cells(target: str) -> list[tuple[str, object, list[str]]]:
    """(file name, code, skipped IPython lines) per code cell; TrainwellError (one line, exit 1) when a cell does not parse."""
    try:
        with open(target, "rb") as handle:
            text = handle.read().decode("utf-8")
        book = notebook.parse(text, target)
    except ReadError as error:
        raise TrainwellError(f"{target}:{error.line}: {error.message}", exit_code=1) from None
    except (OSError, UnicodeDecodeError) as error:
        raise TrainwellError(f"cannot read the notebook {target!r}: {error}") from None
    cells = []
    for cell in book.cells:
        lines, skipped = notebook.code_lines(cell.source)
        filename = f"{os.path.abspath(target)}:cell {cell.number}"
        try:
            code = compile("".join(lines), filename, "exec", dont_inherit=True)
        except SyntaxError as error:
            raise TrainwellError(f"{target}:cell {cell.number}:{error.lineno}: the notebook does not parse: {error.msg}", exit_code=1) from None
        linecache.cache[filename] = (len(cell.source), None, (cell.source + "\n").splitlines(keepends=True), filename)  # tracebacks
        cells.append((filename, code, skipped))
    return cells


def run_notebook(watcher: watch, target: str, args: list[str]) -> int:
    """Run the code cells of ``target`` under ``watcher``; the exit code python would give a script of them.

    ``sys.argv`` is ``[target, *args]`` and ``sys.path[0]`` the notebook's folder; the working directory is unchanged.
    """
    cells = compiled_cells(target)
    namespace = {"__name__": "__main__", "__builtins__": __builtins__, "display": _display}

    def run_cells() -> None:
        for filename, code, skipped in cells:
            if skipped:
                shown = "; ".join(skipped)
                shown = shown if len(shown) <= 80 else shown[:77] + "..."
                print(f"trainwell: {os.path.relpath(filename)}: skipped what only IPython runs: {shown}", file=sys.stderr)
            exec(code, namespace)  # noqa: S102 - the user's own notebook, run as Jupyter would

    return run_as_main(watcher, [target, *args], os.path.dirname(os.path.abspath(target)), run_cells)


def _display(*objects: object, **_: object) -> None:
    """Jupyter's ``display()``, which notebooks call without importing it: each object's text form, on stdout."""
    for item in objects:
        print(repr(item))
