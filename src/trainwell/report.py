"""Renderers of findings: text (people), json (scripts), sarif 2.1.0 (code scanning), github (annotations).

Shared by the static checker and the runtime checker. A *problem* is anything
that is not a finding but must be shown (a file that does not parse, a rule
that failed); renderers take objects with ``kind``, ``path``, ``line``,
``column``, ``message`` and ``rule`` attributes. Every line and column is
1-based, in every format, as :class:`~trainwell.diagnostic.Finding` holds them.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, Protocol, Sequence, TextIO

from trainwell import __version__
from trainwell.catalog import CATALOG
from trainwell.diagnostic import Finding

FORMATS = ("text", "json", "sarif", "github")
DOCS_PATH = "docs/rules/"  # relative to the project root; the pages ship with the package too
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


class ProblemLike(Protocol):
    kind: str
    path: str
    line: int
    column: int
    message: str
    rule: str | None


def render(findings: Sequence[Finding], problems: Sequence[ProblemLike], fmt: str, out: TextIO, *,
           files: int = 0, statistics: bool = False, unsafe_fixes: bool = False) -> None:
    """Write ``findings`` and ``problems`` to ``out`` in format ``fmt``.

    ``unsafe_fixes`` says whether this run counts unsafe fixes as applicable
    (``--unsafe-fixes``): it decides the ``[*]`` marks and the summary's counts.
    """
    if fmt == "json":
        json.dump([_finding_dict(f) for f in findings] + [_problem_dict(p) for p in problems], out, indent=2)
        out.write("\n")
    elif fmt == "sarif":
        json.dump(sarif(findings, problems), out, indent=2)
        out.write("\n")
    elif fmt == "github":
        for finding in findings:
            out.write(github_line(finding) + "\n")
        for problem in problems:
            if getattr(problem, "cell", None) is None:
                out.write(f"::error file={_prop(problem.path)},line={problem.line},col={problem.column},title={_prop(_problem_title(problem))}::{_data(problem.message)}\n")
            else:  # a notebook's cell line is no line of the file: the file, and the cell in the message
                out.write(f"::error file={_prop(problem.path)},title={_prop(_problem_title(problem))}::{_data(_in_cell(problem) + problem.message)}\n")
    else:
        text(findings, problems, out, files=files, statistics=statistics, unsafe_fixes=unsafe_fixes)


def text(findings: Sequence[Finding], problems: Sequence[ProblemLike], out: TextIO, *, files: int = 0,
         statistics: bool = False, unsafe_fixes: bool = False) -> None:
    """``path:line:col: CODE message`` grouped by file, a hint and the fix under each, then a summary.

    ``[*]`` marks a finding that ``--fix`` would fix (ruff's mark), ``[preview]``
    one whose premises are not all proven.
    """
    by_path: dict[str, list[str]] = {}
    for problem in problems:
        by_path.setdefault(problem.path, []).append(f"{_cell_path(problem.path, getattr(problem, 'cell', None))}:{problem.line}:{problem.column}: "
                                                    f"{_problem_title(problem)}: {problem.message}")
    for finding in findings:
        marks = ("[preview] " if finding.preview else "[warning] " if finding.severity == "warning" else "") + \
            ("[*] " if finding.fix is not None and finding.fix.applies(unsafe_fixes) else "")
        lines = [f"{_cell_path(finding.path, finding.extra.get('cell'))}:{finding.line}:{finding.column}: {finding.code} {marks}{finding.message}"]
        if finding.hint:
            lines.append(f"    hint: {finding.hint}")
        if finding.fix is not None:
            lines.append(f"    {_FIX_LABEL[finding.fix.applicability]}: {finding.fix.message}")
        by_path.setdefault(finding.path, []).extend(lines)
    for index, (path, lines) in enumerate(sorted(by_path.items())):
        if index:
            out.write("\n")
        out.write("\n".join(lines) + "\n")
    if statistics and findings:
        out.write("\n")
        for code, count in sorted(Counter(f.code for f in findings).items()):
            out.write(f"{count:6d}  {code}  {CATALOG[code].name}\n")
    if by_path:
        out.write("\n")
    parts = [f"{len(findings)} finding{'s' * (len(findings) != 1)}"] if findings or problems else []
    if problems:
        parts.append(f"{len(problems)} file error{'s' * (len(problems) != 1)}")
    out.write(_summary(parts, len({x.path for x in [*findings, *problems]}), files, fixable_note(findings, unsafe_fixes)) + "\n")


def _summary(parts: Sequence[str], touched: int, files: int, fix_note: str = "") -> str:
    """``3 findings in 2 of 8 files: ...``: what was found, in how many files, of how many checked (0: not counted)."""
    if not parts:
        return f"All clear in {files} file{'s' * (files != 1)}." if files else "All clear."
    where = f" in {touched} of {files} files" if files > touched else f" in {touched} file{'s' * (touched != 1)}"
    return f"{', '.join(parts)}{where}{': ' + fix_note if fix_note else ''}."


_FIX_LABEL = {"safe": "fix", "unsafe": "unsafe fix (may change behaviour; applied only with --unsafe-fixes)", "display": "suggested change (never applied)"}


def fixable_note(findings: Sequence[Finding], unsafe_fixes: bool = False) -> str:
    """``N fixable with --fix (M more with --unsafe-fixes)``, or "" when nothing can be fixed."""
    safe = sum(1 for f in findings if f.fix is not None and f.fix.applicability == "safe")
    unsafe = sum(1 for f in findings if f.fix is not None and f.fix.applicability == "unsafe")
    if unsafe_fixes:
        return f"{safe + unsafe} fixable with --fix --unsafe-fixes" if safe + unsafe else ""
    if not safe and not unsafe:
        return ""
    return f"{safe} fixable with --fix" + (f" ({unsafe} more with --unsafe-fixes)" if unsafe else "")


def github_line(finding: Finding) -> str:
    """A GitHub Actions workflow command that annotates the line (a warning for a preview finding).

    A notebook's finding annotates the line of the ``.ipynb`` file that holds the cell's line, and its message names the cell.
    """
    level, title = finding.severity, f"{finding.code} {finding.name}" + (" (preview)" if finding.preview else "")
    if "cell" in finding.extra:
        where = f"line={finding.extra['file_line']}"
        message = f"cell {finding.extra['cell']}, line {finding.line}: {finding.message}"
    else:
        where = f"line={finding.line},col={finding.column}" + (f",endLine={finding.end_line}" if finding.end_line else "")
        message = finding.message
    return f"::{level} file={_prop(finding.path)},{where},title={_prop(title)}::{_data(message)}"


def sarif(findings: Sequence[Finding], problems: Sequence[ProblemLike] = ()) -> dict[str, Any]:
    """A SARIF 2.1.0 log with one run: the rules that fired and their results."""
    codes = sorted({f.code for f in findings})
    index = {code: i for i, code in enumerate(codes)}
    rules = [{
        "id": code,
        "name": _camel(CATALOG[code].name),
        "shortDescription": {"text": CATALOG[code].summary},
        "helpUri": f"{DOCS_PATH}{CATALOG[code].page_name}",
        "defaultConfiguration": {"level": CATALOG[code].severity},
        "properties": {"tags": sorted(CATALOG[code].detectors)},
    } for code in codes]
    results = []
    for finding in findings:
        region: dict[str, int] = {"startLine": finding.line, "startColumn": finding.column}
        if finding.end_line is not None:
            region["endLine"] = finding.end_line
        if finding.end_column is not None:
            region["endColumn"] = finding.end_column
        message = ("[preview] " if finding.preview else "") + finding.message + (f" Hint: {finding.hint}" if finding.hint else "")
        properties: dict[str, Any] = {"preview": finding.preview}
        if "cell" in finding.extra:  # a notebook: the region is the file's line that holds the cell's line
            region = {"startLine": finding.extra["file_line"]}
            message = f"cell {finding.extra['cell']}, line {finding.line}: {message}"
            properties.update(cell=finding.extra["cell"], cellLine=finding.line, cellColumn=finding.column)
        if finding.fix is not None:
            properties["fix"] = {"message": finding.fix.message, "applicability": finding.fix.applicability}
        results.append({
            "ruleId": finding.code, "ruleIndex": index[finding.code], "level": finding.severity,
            "message": {"text": message},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": _uri(finding.path)}, "region": region}}],
            "properties": properties,
        })
    notifications = [{
        "level": "error", "message": {"text": f"{_problem_title(p)}: {_in_cell(p)}{p.message}"},
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": _uri(p.path)},
                                            **({} if _in_cell(p) else {"region": {"startLine": p.line, "startColumn": p.column}})}}],
    } for p in problems]
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "trainwell", "version": __version__, "informationUri": f"{DOCS_PATH}", "rules": rules}},
            "invocations": [{"executionSuccessful": not any(p.kind == "internal-error" for p in problems), "toolExecutionNotifications": notifications}],
            "results": results,
        }],
    }


def _finding_dict(finding: Finding) -> dict[str, Any]:
    """The finding's JSON; a notebook's also names the cell (its ``line`` and ``column`` are in that cell)."""
    data = finding.to_dict()
    if "cell" in finding.extra:
        data["cell"] = finding.extra["cell"]
    return data


def _in_cell(problem: ProblemLike) -> str:
    """``cell 3, line 2: `` for a problem in a notebook's cell, else ""."""
    cell = getattr(problem, "cell", None)
    return "" if cell is None else f"cell {cell}, line {problem.line}: "


def _cell_path(path: str, cell: int | None) -> str:
    """``nb.ipynb:cell 4`` for a place in a notebook's cell, else the path."""
    return f"{path}:cell {cell}" if cell is not None else path


def _problem_dict(problem: ProblemLike) -> dict[str, Any]:
    return {"code": None, "name": problem.kind, "message": problem.message, "path": problem.path, "line": problem.line,
            "column": problem.column, "end_line": problem.line, "end_column": problem.column, "fix": None, "rule": problem.rule,
            "preview": False, "severity": "error", **({"cell": problem.cell} if getattr(problem, "cell", None) is not None else {})}


def _problem_title(problem: ProblemLike) -> str:
    if problem.kind == "internal-error":
        return f"internal error in {problem.rule} ({CATALOG[problem.rule].name}), please report" if problem.rule in CATALOG else "internal error"
    return problem.kind.replace("-", " ")


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("-"))


def _uri(path: str) -> str:
    return path.replace("\\", "/").removeprefix("./")


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")
