"""IPython magics: ``%%watch`` watches one cell, ``%watch on|off`` every cell run after it.

Loaded with ``%load_ext trainwell``. The findings are shown under the cell
they come from as a table: HTML in Jupyter (``_repr_html_``), text in a
terminal IPython, with the same codes, messages and hints as ``trainwell run``.
Each cell is watched on its own, and every hook is removed when it ends, so
PyTorch is left as it was between cells. IPython is imported only here.

Example:
    In [1]: %load_ext trainwell
    In [2]: %%watch --select TW1
       ...: for x, y in loader:
       ...:     loss = loss_fn(model(x), y); loss.backward(); optimizer.step()
"""

from __future__ import annotations

import html
import linecache
import shlex
from typing import Any, Sequence

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.display import display

from trainwell.diagnostic import Finding
from trainwell.errors import TrainwellError
from trainwell.runtime.session import display_path, step_label
from trainwell.runtime.watcher import watch


class FindingsTable:
    """The findings of one cell: ``_repr_html_`` for Jupyter, ``repr`` for a terminal."""

    def __init__(self, findings: Sequence[Finding], cell_file: str | None, steps: int) -> None:
        self.findings, self.cell_file, self.steps = list(findings), cell_file, steps

    def _where(self, finding: Finding) -> str:
        return f"line {finding.line}" if finding.path == self.cell_file else f"{display_path(finding.path)}:{finding.line}"

    def __repr__(self) -> str:
        if not self.findings:
            return f"trainwell: no findings in {self.steps} training step(s)"
        lines = [f"trainwell: {len(self.findings)} finding(s) in {self.steps} training step(s)"]
        for f in self.findings:
            lines.append(f"{self._where(f)}: {f.code} {f.name} ({step_label(f.step)}, seen {f.count}x): {f.message}")
            if f.hint:
                lines.append(f"    hint: {f.hint}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        if not self.findings:
            return f"<p>trainwell: no findings in {self.steps} training step(s)</p>"
        rows = "".join(
            f"<tr><td><code>{f.code}</code></td><td>{html.escape(f.name)}</td><td>{html.escape(self._where(f))}</td>"
            f"<td>{html.escape(step_label(f.step))}</td><td>{f.count}</td><td>{html.escape(f.message)}"
            f"{'<br><i>hint: ' + html.escape(f.hint) + '</i>' if f.hint else ''}</td></tr>"
            for f in self.findings)
        head = "".join(f"<th>{name}</th>" for name in ("code", "name", "where", "first seen", "count", "what happened"))
        return (f"<p>trainwell: {len(self.findings)} finding(s) in {self.steps} training step(s); "
                f"<code>trainwell rule CODE</code> explains each one</p><table><tr>{head}</tr>{rows}</table>")


@magics_class
class WatchMagics(Magics):
    """``%%watch [--select CODES] [--ignore CODES]`` and ``%watch on|off [--select ...]``; ``last`` holds the latest findings."""

    def __init__(self, shell: Any) -> None:
        super().__init__(shell)
        self.last: list[Finding] = []
        self._every: dict[str, Any] | None = None  # the options of `%watch on`, None when off
        self._active: watch | None = None
        self._cells = 0

    @cell_magic("watch")
    def watch_cell(self, line: str, cell: str) -> None:
        """Run the cell under the runtime checker and show what it found under the cell."""
        options = _options(line)
        self._cells += 1
        filename = f"<ipython-watch-{self._cells}>"  # "<ipython" names user code for the checker's locations
        source = "\n" + self.shell.transform_cell(cell)  # line 1 is the `%%watch` line: lines are the cell's as shown
        linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)  # tracebacks show the cell
        code = compile(source, filename, "exec")
        if self._active is not None:  # `%watch on` already watches this cell
            exec(code, self.shell.user_global_ns, self.shell.user_ns)  # noqa: S102
            return
        watcher = _start(options)
        try:
            with watcher:
                exec(code, self.shell.user_global_ns, self.shell.user_ns)  # noqa: S102 - the user's own cell, as IPython runs it
        finally:
            self._show(watcher, filename)

    @line_magic("watch")
    def watch_line(self, line: str) -> None:
        """``%watch on [--select CODES] [--ignore CODES]``: watch every cell run after this one; ``%watch off``: stop."""
        words = shlex.split(line)
        if not words or words[0] not in ("on", "off"):
            raise UsageError("use `%watch on` (watch every cell run after this one) or `%watch off`; `%%watch` watches one cell")
        events = self.shell.events
        if words[0] == "on":
            options = _options(" ".join(words[1:]))
            _start(options)  # an unknown code is an error now, not at the next cell
            if self._every is None:
                events.register("pre_run_cell", self._pre_run_cell)
                events.register("post_run_cell", self._post_run_cell)
            self._every = options
            print("trainwell: watching every cell run from now on; `%watch off` stops")
        elif self._every is not None:
            events.unregister("pre_run_cell", self._pre_run_cell)
            events.unregister("post_run_cell", self._post_run_cell)
            self._every = None
            self._close()

    def _pre_run_cell(self, info: Any = None) -> None:
        if self._every is not None and self._active is None:
            self._active = _start(self._every)
            self._active.__enter__()

    def _post_run_cell(self, result: Any = None) -> None:
        try:  # the file name IPython compiled the cell under, so its findings say "line N"
            raw = result.info.raw_cell
            cell_file = self.shell.compile.get_code_name(raw, self.shell.transform_cell(raw), result.execution_count)
        except (AttributeError, TypeError):
            cell_file = None
        self._close(cell_file)

    def _close(self, cell_file: str | None = None) -> None:
        active, self._active = self._active, None
        if active is not None:
            active.__exit__(None, None, None)
            self._show(active, cell_file)

    def _show(self, watcher: watch, cell_file: str | None) -> None:
        self.last = list(watcher.findings)
        if watcher.findings or watcher.faults:
            display(FindingsTable(watcher.findings, cell_file, watcher.steps))
        if watcher.faults:
            print("trainwell: internal probe errors (please report): " + "; ".join(watcher.faults))


def _options(line: str) -> dict[str, list[str] | None]:
    """``--select CODES`` / ``--ignore CODES`` (comma-separated, repeatable); UsageError for anything else."""
    options: dict[str, list[str] | None] = {"select": None, "ignore": None}
    words = shlex.split(line)
    while words:
        word = words.pop(0)
        if word not in ("--select", "--ignore") or not words:
            raise UsageError(f"%%watch: unexpected {word!r}; options: --select CODES, --ignore CODES (comma-separated)")
        options[word[2:]] = (options[word[2:]] or []) + [c.strip() for c in words.pop(0).split(",") if c.strip()]
    return options


def _start(options: dict[str, list[str] | None]) -> watch:
    try:
        return watch(select=options["select"], ignore=options["ignore"])
    except TrainwellError as error:
        raise UsageError(f"%%watch: {error}") from None


def load(ipython: Any) -> None:
    """Register the magics (what ``%load_ext trainwell`` calls)."""
    ipython.register_magics(WatchMagics)

