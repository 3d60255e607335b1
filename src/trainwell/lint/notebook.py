"""A Jupyter notebook (nbformat v4, plain JSON) read as one Python program, and fixed cell by cell.

The code cells, in order, form the program, as running them top to bottom
does. Each cell becomes Python the way Jupyter makes it: with IPython's own
input transformer (``IPython.core.inputtransformer2``) when IPython is
installed, which strips a common indent and prompts and turns ``%magic``,
``!shell``, ``obj?`` into calls, so a block whose body is only a magic parses.
Without IPython the same lines become ``pass`` plus a comment of the line, and
a common indent is stripped as IPython strips it. A ``%%cell`` magic's body
is left out, except for the magics that run it as Python (``%%time`` ...).
Every cell line stays one program line, and the characters stripped from its
start are kept, so a finding maps back to (cell, line, column) exactly and a
fix is applied to the cell's own source. A cell that does not parse is found
by parsing each cell alone, as Jupyter compiles them. A cell is numbered by
its position in the notebook, from 1, markdown cells included. The JSON is
never re-serialised: ``--fix`` replaces the changed cells' ``"source"`` values
in the file's text, so outputs, metadata and every other cell stay
byte-identical. nbformat itself is not needed.
"""

from __future__ import annotations

import ast
import bisect
import dataclasses
import functools
import json
import re
import textwrap
import warnings
from dataclasses import dataclass
from json.decoder import scanstring
from typing import Any, Iterable, Sequence

from trainwell.diagnostic import Edit, Finding, Fix
from trainwell.lint import fix as fix_mod
from trainwell.lint.source_file import ReadError

SUFFIX = ".ipynb"
MARK = "#trainwell-ipython:"  # without IPython: the prefix that turns a line IPython handles into a comment
_STATEMENT = "pass  "  # ... after a statement that does nothing, where the line starts a statement (the only line of a block)
# cell magics whose body is Python run in the user's namespace: only the magic's own line is IPython's
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "watch"})
_ESCAPE = re.compile(r"^\s*(?:[%!]|[\w.]+\s*=\s*[%!](?!=)|\?|[\w.]+\?{1,2}\s*$)")
_LINE_WORD = re.compile(r"\bline (\d+)\b")
_LINES = re.compile(r"[^\n]*\n|[^\n]+")
_HELP_OR_ASSIGNED, _LINE_FIRST = re.compile(r"\?|=[\s\\]*[%!]"), re.compile(r"[ \t\f]*[!?%,;/]")  # IPython's escapes (see _may_escape)
_SPACE = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null")


def is_notebook(path: str) -> bool:
    return path.endswith(SUFFIX)


@dataclass
class Cell:
    """One code cell: its number (1-based, every cell counted), its source, and where that source lies in the file."""

    number: int
    source: str
    span: tuple[int, int]  # the "source" value's start and end offsets in the file's text
    file_lines: list[int]  # the file line of each source line (a list source puts each line on its own)
    program: CellProgram = dataclasses.field(repr=False)  # the cell as Python


@dataclass
class CellProgram:
    """A cell as Python: one program line per cell line, what was stripped from each line's start, which lines are IPython's."""

    lines: list[str]
    shifts: list[int]  # characters stripped from the start of each line (a common indent, a prompt)
    ipython: list[bool]  # lines IPython handles itself (magics, shell, help): not the user's Python text
    skipped: list[str]  # those lines as written

    def shift(self, line: int) -> int:
        return self.shifts[line - 1] if 0 < line <= len(self.shifts) else 0

    def is_ipython(self, line: int) -> bool:
        return 0 < line <= len(self.ipython) and self.ipython[line - 1]


@dataclass
class Notebook:
    """A notebook's code cells and the program they form."""

    text: str
    cells: list[Cell]
    program: str
    starts: list[int]  # the program line (1-based) of each code cell's first line

    def where(self, line: int) -> tuple[Cell, int]:
        """The cell of a program line, and the line in that cell (1-based)."""
        index = max(bisect.bisect_right(self.starts, line) - 1, 0)
        return self.cells[index], line - self.starts[index] + 1

    def localize(self, findings: Iterable[Finding], problems: Sequence[Any], path: str) -> tuple[list[Finding], list[Any]]:
        """Findings and problems of the program moved to their cells (``extra["cell"]``, cell lines).

        A fix whose edits leave the finding's cell is dropped (none of the rules writes one).
        """
        moved = []
        for finding in findings:
            if finding.path != path:
                moved.append(finding)
                continue
            cell, line = self.where(finding.line)
            end_line = line + (finding.end_line - finding.line) if finding.end_line is not None else None
            shifted = cell.program
            fix = finding.fix
            if fix is not None:
                edits = [(self.where(e.line), self.where(e.end_line), e) for e in fix.edits]
                if all(a[0] is cell and b[0] is cell and not shifted.is_ipython(a[1]) and not shifted.is_ipython(b[1]) for a, b, _ in edits):
                    fix = Fix(fix.message, tuple(_edit_in_cell(cell, a[1], b[1], e) for a, b, e in edits), fix.applicability)
                else:
                    fix = None
            column = finding.column + shifted.shift(line)
            end_column = finding.end_column + shifted.shift(end_line or line) if finding.end_column is not None else None
            extra = {**finding.extra, "cell": cell.number, "file_line": cell.file_lines[min(line, len(cell.file_lines)) - 1]}
            message, hint = (self._lines_named(text, cell) if text else text for text in (finding.message, finding.hint))
            moved.append(dataclasses.replace(finding, message=message, hint=hint, line=line, column=column, end_line=end_line,
                                             end_column=end_column, fix=fix, extra=extra))
        for problem in problems:
            if problem.path != path or not self.cells:
                continue
            if problem.kind == "syntax-error":
                self._syntax_error_in_its_cell(problem)
            elif problem.kind == "invalid-noqa":
                cell, problem.line = self.where(problem.line)
                problem.cell, problem.column = cell.number, problem.column + cell.program.shift(problem.line)
        return moved, list(problems)

    def _syntax_error_in_its_cell(self, problem: Any) -> None:
        """The first cell that does not parse alone (Jupyter compiles each cell alone), at its own line and column."""
        for cell in self.cells:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    ast.parse("".join(cell.program.lines))
            except SyntaxError as error:
                line = error.lineno or 1
                problem.cell, problem.line, problem.message = cell.number, line, error.msg or problem.message
                problem.column = max(error.offset or 1, 1) + cell.program.shift(line)
                return
            except (ValueError, RecursionError, MemoryError):
                continue
        cell, problem.line = self.where(problem.line)
        problem.cell = cell.number

    def _lines_named(self, text: str, cell: Cell) -> str:
        """A message's "line N" (a program line) said as the line in its cell: "line 3", or "line 3 of cell 2" in another cell."""

        def named(match: re.Match[str]) -> str:
            other, line = self.where(int(match.group(1)))
            return f"line {line}" + ("" if other is cell else f" of cell {other.number}")

        return _LINE_WORD.sub(named, text)

    def apply_fixes(self, findings: Iterable[Finding], unsafe: bool = False) -> tuple[str, int]:
        """The notebook's text with the fixes of its findings applied to their cells' sources, and how many went in."""
        by_cell: dict[int, list[Finding]] = {}
        for finding in findings:
            if "cell" in finding.extra:
                by_cell.setdefault(finding.extra["cell"], []).append(finding)
        replaced: list[tuple[tuple[int, int], str]] = []
        total = 0
        for cell in self.cells:
            if cell.number not in by_cell:
                continue
            source, count = fix_mod.apply_fixes(cell.source, by_cell[cell.number], unsafe,
                                                parse=lambda text: ast.parse("".join(cell_program(text).lines)))
            if not count:
                continue
            replaced.append((cell.span, _source_json(self.text, cell.span, source)))
            total += count
        text = self.text
        for (start, end), value in sorted(replaced, reverse=True):
            text = text[:start] + value + text[end:]
        return text, total


def parse(text: str, path: str = "") -> Notebook:
    """The notebook in ``text``; ReadError (one line: what and how to fix) when it is not an nbformat v4 notebook."""
    try:
        data = json.loads(text)
    except ValueError as error:
        line = getattr(error, "lineno", 1)
        raise ReadError(f"not a notebook: invalid JSON ({getattr(error, 'msg', error)}); open and save it in Jupyter to repair it", line,
                        getattr(error, "colno", 1)) from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list) or data.get("nbformat") != 4:
        found = data.get("nbformat") if isinstance(data, dict) else None
        raise ReadError(f"not an nbformat v4 notebook (nbformat: {found!r}); convert it with `jupyter nbconvert --to notebook`")
    spans: dict[int, tuple[int, int]] = {}
    lines_at: dict[int, list[int]] = {}
    _scan(text, 0, (), spans, lines_at)
    newlines = [match.start() for match in re.finditer("\n", text)]
    cells, chunks, starts = [], [], []
    line = 1
    for index, raw in enumerate(data["cells"]):
        if not isinstance(raw, dict) or raw.get("cell_type") != "code" or index not in spans:
            continue
        source = raw.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        shaped = cell_program(source)
        program = shaped.lines
        items = raw["source"] if isinstance(raw.get("source"), list) else [source]
        offsets = [bisect.bisect_left(newlines, at) + 1 for at in lines_at[index] or [spans[index][0]]]
        file_lines = [at for item, at in zip(items, offsets) for _ in _LINES.findall(str(item))] or offsets[:1]
        file_lines += file_lines[-1:] * (len(program) - len(file_lines))
        cells.append(Cell(index + 1, source, spans[index], file_lines, shaped))
        starts.append(line)
        chunk = "".join(program)
        chunks.append(chunk if chunk.endswith("\n") or not chunk else chunk + "\n")
        line += len(program)
    return Notebook(text, cells, "".join(chunks), starts)


def program_of(text: str, path: str) -> str:
    """The program of a notebook's text (``text`` itself for any other file, or a notebook that does not read)."""
    if not is_notebook(path):
        return text
    try:
        return parse(text, path).program
    except ReadError:
        return text


def cell_program(source: str) -> CellProgram:
    """The cell as Jupyter runs it: IPython's own transformer when IPython is installed, else trainwell's comment-out."""
    transformer = _ipython_transformer()
    if transformer is not None and not _cell_magic(_LINES.findall(source)):
        shaped = _transformed(source, transformer)
        if shaped is not None:
            return shaped
    return _fallback(source)


def code_lines(source: str) -> tuple[list[str], list[str]]:
    """A cell's lines as plain Python runs them (IPython's own lines made ``pass``), and those lines as written.

    For ``trainwell run``, which runs cells without IPython.
    """
    shaped = _fallback(source)
    return shaped.lines, shaped.skipped


def load_transformer() -> None:
    """Import IPython's transformer now (once, before worker processes fork: each would import it again)."""
    _ipython_transformer()


@functools.cache
def _ipython_transformer() -> Any:
    """IPython's TransformerManager, or None without IPython (imported once, on the first notebook).

    Its token pass (tokenize the cell, look for special syntax, repeat) is skipped for Python with none of IPython's
    escape characters, where it can find nothing and its tokenizer raises nothing: most cells, and most of the time a
    notebook takes.
    """
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:
        return None
    manager = TransformerManager()
    token_pass = manager.do_token_transforms
    manager.do_token_transforms = lambda lines: token_pass(lines) if _may_escape(lines) else lines
    return manager


def _may_escape(lines: list[str]) -> bool:
    """Whether IPython's token pass may find something or raise: a ``?`` (``obj?``), a ``%`` or ``!`` after an ``=``
    (``a = %time f()``, ``files = !ls``), a line whose first token is one of its ESCAPE_SINGLES (``!ls``, ``%time``,
    ``,f a``), or indented text that does not compile (an unindent its tokenizer rejects). ``a % b`` and ``a != b``
    are none."""
    text = "".join(lines)
    physical = text.splitlines()
    if _HELP_OR_ASSIGNED.search(text) is not None or any(_LINE_FIRST.match(line) for line in physical):
        return True
    if not any(line.startswith((" ", "\t", "\f")) for line in physical):
        return False  # no indentation: nothing its tokenizer can reject
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, "<cell>", "exec", ast.PyCF_ONLY_AST)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return True
    return False


def _cell_magic(lines: Sequence[str]) -> str | None:
    first = lines[0].strip() if lines else ""
    return first[2:].split(None, 1)[0] if first.startswith("%%") and len(first) > 2 else None


def _transformed(source: str, transformer: Any) -> CellProgram | None:
    """IPython's Python for the cell, line for line; None when it joins or splits lines (then the fallback reads the cell)."""
    lines = _LINES.findall(source)
    blank = next((i for i, line in enumerate(lines) if line.strip()), len(lines))  # IPython drops leading blank lines
    text = "".join(lines[blank:])
    try:
        out = _LINES.findall(_untouched(text) or transformer.transform_cell(text)) if blank < len(lines) else []
    except Exception:  # noqa: BLE001 - a cell IPython cannot transform is read by the fallback
        return None
    if len(out) != len(lines) - blank:
        return None
    shaped = CellProgram(lines[:blank], [0] * blank, [False] * blank, [])
    for before, after in zip(lines[blank:], out):
        text, new = before.rstrip("\r\n"), after.rstrip("\r\n")
        ending = before[len(text):] or "\n"
        python = text.endswith(new)
        shift = len(text) - len(new) if python else max(_indent(text) - _indent(new), 0)
        shaped.lines.append(new + ending)
        shaped.shifts.append(shift)
        shaped.ipython.append(not python)
        if not python:
            shaped.skipped.append(text)
    return shaped


def _untouched(text: str) -> str | None:
    """What IPython's ``transform_cell`` returns for a cell it has nothing to do to, without running it (most of the
    time a notebook takes): no escape character (``%``, ``!``, ``?``), no ``>>>`` / ``...`` / ``In [1]:`` prompt, a
    first line not indented. There its passes come down to a final newline and its ``leading_indent`` step, a
    ``textwrap.dedent`` that only empties whitespace-only lines (equal to IPython 9's answer on all 4,173 such cells of
    305 public notebooks). None for any other cell."""
    if text[:1] in " \t\f\v" or "%" in text or "!" in text or "?" in text:
        return None
    text = text if text.endswith("\n") else text + "\n"
    if any(_PROMPT.match(line) for line in text.splitlines()):
        return None
    return textwrap.dedent(text)


_PROMPT = re.compile(r"\s*(?:>>>|\.\.\.|In \[\d+\]:)")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _fallback(source: str) -> CellProgram:
    """Without IPython: its lines become ``pass`` and a comment of the line (a block of only magics still parses),
    a ``%%cell`` magic's body is left out unless it is Python, a common indent is stripped as IPython strips it."""
    lines = _LINES.findall(source)
    first = next((line for line in lines if line.strip()), "")
    common = first[:_indent(first)]
    shifts = [len(common) if common and line.startswith(common) else 0 for line in lines]
    lines = [line[shift:] for line, shift in zip(lines, shifts)]
    magic = _cell_magic(lines)
    shaped = CellProgram([], shifts, [], [])
    state = _Open()
    continued = False  # a marked line ending in a backslash goes on on the next line
    for number, line in enumerate(lines):
        starts_statement = state.depth == 0 and state.quote is None and not state.backslash
        escape = continued or (starts_statement and _ESCAPE.match(line) is not None)
        escape = escape or (magic is not None and (number == 0 or magic not in PYTHON_CELL_MAGICS))
        if escape:
            indent = _indent(line)
            statement = _STATEMENT if starts_statement and not continued and (magic is None or number == 0) else ""
            shaped.lines.append(line[:indent] + statement + MARK + line[indent:])
            shaped.skipped.append(line.rstrip("\n"))
            continued = line.rstrip("\r\n").endswith("\\")
        else:
            shaped.lines.append(line)
            state.feed(line)
            continued = False
        shaped.ipython.append(escape)
    return shaped


def _edit_in_cell(cell: Cell, line: int, end_line: int, edit: Edit) -> Edit:
    """A program edit at the cell's own columns; a line it inserts gets the stripped prefix of the line it follows."""
    shift, end_shift = cell.program.shift(line), cell.program.shift(end_line)
    prefix = _LINES.findall(cell.source)[line - 1][:shift] if shift else ""
    content = edit.content.replace("\n", "\n" + prefix) if prefix else edit.content
    return Edit(line, edit.column + shift, end_line, edit.end_column + end_shift, content)


class _Open:
    """Whether a line starts a statement: the brackets and triple-quoted string left open by the lines before it.

    IPython looks for ``%``/``!`` only where a statement starts, so ``% b`` inside ``(a\n % b)`` stays Python.
    """

    def __init__(self) -> None:
        self.depth = 0
        self.quote: str | None = None
        self.backslash = False

    def feed(self, line: str) -> None:
        i, n = 0, len(line)
        while i < n:
            if self.quote is not None:
                if line[i] == "\\":
                    i += 2
                    continue
                if line.startswith(self.quote, i):
                    i, self.quote = i + len(self.quote), None
                    continue
                if len(self.quote) == 1 and line[i] == "\n":
                    self.quote = None  # an unterminated string: the line is not Python anyway
                i += 1
                continue
            char = line[i]
            if char == "#":
                break
            if char in "\"'":
                self.quote = char * 3 if line.startswith(char * 3, i) else char
                i += len(self.quote)
                continue
            if char in "([{":
                self.depth += 1
            elif char in ")]}":
                self.depth = max(self.depth - 1, 0)
            i += 1
        self.backslash = line.rstrip("\r\n").endswith("\\") and self.quote is None


def _source_json(text: str, span: tuple[int, int], source: str) -> str:
    """``source`` as a JSON value laid out as the one it replaces: a list of lines (nbformat's way) or one string."""
    old = text[span[0]:span[1]]
    ascii_only = old.isascii() and "\\u" in text and text.isascii()
    if not old.startswith("["):
        return json.dumps(source, ensure_ascii=ascii_only)
    items = [json.dumps(line, ensure_ascii=ascii_only) for line in source.splitlines(keepends=True)]
    inner = old[1:-1]
    lead = inner[:len(inner) - len(inner.lstrip())] or ""
    tail = inner[len(inner.rstrip()):] if inner.strip() else ""
    if not inner.strip():  # an empty list: lay the lines out as nbformat does
        indent = _line_indent(text, span[0])
        lead, tail = "\n" + indent + " ", "\n" + indent
    separator = _separator(inner) or ("," + lead if "\n" in lead else ", ")
    return "[" + (lead + separator.join(items) + tail if items else "") + "]"


def _separator(inner: str) -> str | None:
    """The text between the first two strings of a JSON list's inside, when it has two."""
    start = inner.find('"')
    if start < 0:
        return None
    _, end = scanstring(inner, start + 1)
    following = inner.find('"', end)
    return inner[end:following] if following > 0 else None


def _line_indent(text: str, offset: int) -> str:
    start = text.rfind("\n", 0, offset) + 1
    line = text[start:offset]
    return line[:len(line) - len(line.lstrip())]


def _no_constant(name: str) -> float:
    raise ValueError(f"{name}: read by _scan, as before")


_SKIP = json.JSONDecoder(parse_constant=_no_constant)


def _scan(text: str, pos: int, path: tuple[Any, ...], spans: dict[int, tuple[int, int]], lines_at: dict[int, list[int]]) -> int:
    """The end of the JSON value at ``pos``; records where each ``cells[i].source`` value lies (and where its items start)."""
    pos = _SPACE.match(text, pos).end()  # type: ignore[union-attr]
    if not (len(path) <= 3 and path[:1] in ((), ("cells",)) and (len(path) < 3 or path[2] == "source")):
        try:  # no cells[i].source inside (outputs, metadata): only its end is needed, which json's C scanner finds
            return _SKIP.raw_decode(text, pos)[1]
        except ValueError:
            pass  # NaN or Infinity: read below, as before
    start = pos
    char = text[pos:pos + 1]
    is_source = len(path) == 3 and path[0] == "cells" and path[2] == "source"
    if char == "{" or char == "[":
        close = "}" if char == "{" else "]"
        pos = _SPACE.match(text, pos + 1).end()  # type: ignore[union-attr]
        index = 0
        item_lines = []
        while text[pos:pos + 1] != close:
            if char == "{":
                if text[pos:pos + 1] != '"':
                    raise ReadError("not a notebook: a JSON object key is not a string")
                key, pos = scanstring(text, pos + 1)
                pos = _SPACE.match(text, pos).end()  # type: ignore[union-attr]
                pos += 1  # the ':' json.loads has already checked
                pos = _scan(text, pos, path + (key,), spans, lines_at)
            elif is_source and text[pos:pos + 1] == '"':  # a line of the cell: a string, read here (no call per line)
                item_lines.append(pos)
                pos = scanstring(text, pos + 1)[1]
            else:
                if is_source:
                    item_lines.append(_SPACE.match(text, pos).end())  # type: ignore[union-attr]
                pos = _scan(text, pos, path + (index,), spans, lines_at)
                index += 1
            pos = _SPACE.match(text, pos).end()  # type: ignore[union-attr]
            if text[pos:pos + 1] == ",":
                pos = _SPACE.match(text, pos + 1).end()  # type: ignore[union-attr]
        end = pos + 1
        if is_source:
            lines_at[path[1]] = item_lines
    elif char == '"':
        _, end = scanstring(text, pos + 1)
        if is_source:
            lines_at[path[1]] = []
    else:
        match = _NUMBER.match(text, pos)
        end = match.end() if match else pos + 1
    if is_source:
        spans[path[1]] = (start, end)
    return end

