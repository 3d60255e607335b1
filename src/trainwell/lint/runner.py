"""Run the rules over files: discovery, configuration, noqa, and errors that never stop the run.

A file that does not parse is reported as a *problem* with its location (and
makes the run fail, as ruff does); a rule that crashes on one file is reported
as an internal-error problem naming rule and file, and the run goes on.
"""

from __future__ import annotations

import ast
import os
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

from trainwell.catalog import STATIC, enabled_codes, validate_patterns
from trainwell.lint import config as config_mod
from trainwell.lint import notebook, source_file, workers
from trainwell.lint.cache import FOLDER_NAME, Cache
from trainwell.lint.discover import discover
from trainwell.lint.facts import CheckedFile
from trainwell.lint.index import ProjectIndex
from trainwell.lint.problem import Problem
from trainwell.lint.rules import all_rules
from trainwell.lint.suppress import suppressed, unknown_codes
from trainwell.diagnostic import Finding
from trainwell.errors import TrainwellError

_LIBRARIES = ("lightning", "accelerate", "transformers")
_TORCH_IMPORT = re.compile(r"^\s*(?:import|from)\s+(?:lightning|pytorch_lightning|accelerate|transformers)\b", re.M)


@dataclass
class Report:
    """What one run found."""

    findings: list[Finding] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    files: int = 0
    lines: int = 0
    sources: dict[str, str] = field(default_factory=dict)  # path -> text, kept for --fix / --diff

    @property
    def failed(self) -> bool:
        return bool(self.findings) or any(p.kind != "internal-error" for p in self.problems)


def check_source(source: str, path: str, codes: Iterable[str], target_version: tuple[int, int] = config_mod.DEFAULT_TARGET,
                 force: bool = False, preview: bool = False, project: Any = None) -> tuple[list[Finding], list[Problem]]:
    """Findings and problems for one file's text.

    A file that never mentions PyTorch (or a library built on it) holds no
    training loop: it is not even parsed (this keeps big trees fast), so its
    syntax errors go unreported. ``force`` checks every file with every rule.
    ``preview`` keeps the findings whose premises are not all proven.
    ``project`` is the index of the checked tree (None: this file alone).
    """
    if not force and "torch" not in source and not (any(w in source for w in _LIBRARIES) and _TORCH_IMPORT.search(source)):
        return [], []
    ctx = project.parsed(Path(path)) if project is not None else None  # already parsed as another file's helper
    if ctx is not None and ctx.source != source:
        ctx = None  # that parse read other text (the disk's, where this text came from elsewhere): this text is checked
    if ctx is None:  # the same text parsed once is not parsed again
        try:
            with warnings.catch_warnings():  # the checked code's own warnings (invalid escapes) are not ours to print
                warnings.simplefilter("ignore")
                tree = ast.parse(source, filename=path)
        except SyntaxError as error:
            return [], [Problem("syntax-error", path, error.msg or "invalid syntax", error.lineno or 1, max(error.offset or 1, 1))]
        except (ValueError, RecursionError, MemoryError) as error:
            return [], [Problem("syntax-error", path, f"cannot parse: {error}")]
        ctx = CheckedFile(path, source, tree, target_version)
        ctx.project = project
        if project is not None:
            project.keep(ctx)  # a file checked after this one may import it
    ctx.target_version = target_version
    findings: list[Finding] = []
    problems = [Problem("invalid-noqa", path, f"{code} in `{comment}` is no trainwell code, so it silences nothing; "
                        "write a catalog code (`trainwell rule --all`) or remove it", line, column)
                for line, column, code, comment in unknown_codes(ctx.lines)]
    if not force and not ctx.uses_torch:
        return findings, problems
    rules = all_rules()
    reaches: dict[tuple[str, ...], bool] = {}  # REQUIRES words -> whether the file (or what it imports) says one
    seen: set[tuple[str, str, int, int]] = set()
    for code in sorted(codes):
        rule = rules.get(code)
        if rule is None:
            continue
        words = getattr(rule, "REQUIRES", ())
        if words and not force:
            if words not in reaches:
                reaches[words] = any(w in source for w in words) or (project is not None and project.mentions(ctx, words))
            if not reaches[words]:
                continue  # the rule's premises need a training step that nothing here can reach
        try:
            for finding in rule.check(ctx):
                where = (finding.code, finding.path, finding.line, finding.column)
                if where in seen:
                    continue
                seen.add(where)
                lines = ctx.lines if finding.path == path else project.lines_of(finding.path)
                if (preview or not finding.preview) and not suppressed(lines, finding.line, finding.code):
                    findings.append(finding)
        except Exception as error:  # one rule failing on one file must not stop the run
            problems.append(Problem("internal-error", path, f"{type(error).__name__}: {error}", rule=code))
    ctx.__dict__.pop("analysis", None)  # the loop model is per checked file; the parsed file stays for its importers
    findings.sort(key=lambda f: (f.path != path, f.path, f.line, f.column, f.code))
    return findings, problems


def read_source(path: Path) -> str:
    return source_file.read(path)[1]


def resolve_codes(select: Sequence[str] | None, ignore: Sequence[str] | None) -> set[str]:
    """The static codes a run reports; TrainwellError for an unknown code or prefix."""
    for patterns in (select, ignore):
        if patterns:
            try:
                validate_patterns(list(patterns))
            except ValueError as error:
                raise TrainwellError(str(error)) from None
    return enabled_codes(list(select) if select else None, list(ignore) if ignore else None, detector=STATIC)


def run(paths: Sequence[str | os.PathLike[str]], select: Sequence[str] | None = None, ignore: Sequence[str] | None = None,
        target_version: tuple[int, int] | str | None = None, force: bool = False, exclude: Sequence[str] = (),
        preview: bool | None = None, cache: bool = False, cache_dir: str | os.PathLike[str] | None = None,
        respect_gitignore: bool = True, text: str | None = None, force_exclude: bool = False,
        jobs: int | None = 1) -> Report:
    """Check files and folders with the configuration found above the first path.

    ``preview`` None takes the config's; ``cache`` reuses results of unchanged
    files from ``cache_dir`` (default: the config's ``cache-dir``, else
    ``.trainwell_cache`` beside the pyproject.toml, else in the current folder).
    ``respect_gitignore`` False searches folders without the ignore files.
    ``text`` is the source of the one path given (read from stdin), checked
    alone: that path need not exist. ``force_exclude`` applies ``exclude``
    to named files too. ``jobs``: processes that check the files the cache
    does not answer (None: every available core); the report is the same.
    """
    paths = list(paths) or ["."]
    config = config_mod.load(Path(paths[0]))
    config.exclude = list(config.exclude) + list(exclude)
    select = list(select) if select else config.select
    ignore = list(config.ignore) + list(ignore or [])
    codes = resolve_codes(select, ignore)
    if isinstance(target_version, str):
        target_version = config_mod.parse_version(target_version, "--target-version")
    preview = config.preview if preview is None else preview
    files = [Path(paths[0])] if text is not None else discover(paths, config.exclude, config.root, respect_gitignore, force_exclude)
    roots = [Path(p) if Path(p).is_dir() else Path(p).parent for p in paths]
    project = ProjectIndex(files if text is None else [], roots, target_version or config.target_version or config_mod.DEFAULT_TARGET)
    cache = cache and text is None
    store = Cache(Path(cache_dir) if cache_dir else config.cache_dir or (config.root or Path.cwd()) / FOLDER_NAME, files) if cache else None
    report = Report()
    # Read every file and ask the cache here; check the rest (in workers when jobs > 1), in file order.
    read: list[tuple[str, str | None, Any, str]] = []  # name, source (None: unreadable), result or Problem, cache key
    missing: list[tuple[str, str, tuple[int, int]]] = []
    for path in files:
        name = str(path)
        try:
            data, source = (text.encode(), text) if text is not None else source_file.read(path)
            target = target_version or config.target_version or config.declared_for(path) or config_mod.DEFAULT_TARGET
            key = store.key(name, data, codes, target, preview, force, store.dependency_digest(name)) if store else ""
        except (source_file.ReadError, OSError) as error:
            read.append((name, None, _read_problem(name, error), ""))
            continue
        result = store.get(key) if store else None
        if result is None:
            missing.append((source, name, target))
        read.append((name, source, result, key))
    if any(notebook.is_notebook(name) for _, name, _ in missing):
        notebook.load_transformer()
    checked = iter(workers.map_in_order(_check_or_problem, (codes, force, preview, project), missing,
                                        workers.available_cores() if jobs is None else jobs))
    reported: set[tuple[str, str, int, int]] = set()  # a helper's finding is seen from each file that calls it: once
    for name, source, result, key in read:
        report.files += 1
        if source is not None and result is None:
            result = next(checked)
            if store and not isinstance(result, Problem):
                store.put(key, name, *result)
        if isinstance(result, Problem):
            report.problems.append(result)
            continue
        findings, problems = result
        report.lines += source.count("\n") + 1
        report.sources[name] = source
        for finding in findings:
            where = (finding.code, finding.path, finding.line, finding.column)
            if where not in reported:
                reported.add(where)
                report.findings.append(finding)
        report.problems.extend(problems)
    if store:
        store.save()
    return report


def _check_or_problem(codes: set[str], force: bool, preview: bool, project: Any, source: str, name: str,
                      target: tuple[int, int]) -> tuple[list[Finding], list[Problem]] | Problem:
    """One file checked (a notebook as the program its cells form), or the problem that stopped it; only on a cache miss."""
    try:
        book = notebook.parse(source, name) if notebook.is_notebook(name) else None
        findings, problems = check_source(book.program if book else source, name, codes, target, force, preview, project)
    except (source_file.ReadError, OSError) as error:
        return _read_problem(name, error)
    if book is not None:
        findings, problems = book.localize(findings, problems, name)
    return findings, problems


def _read_problem(name: str, error: Exception) -> Problem:
    if isinstance(error, source_file.ReadError):
        return Problem("read-error", name, error.message, error.line, error.column)
    return Problem("read-error", name, f"cannot read: {getattr(error, 'strerror', None) or error}")


def check(paths_or_source: str | os.PathLike[str] | Sequence[str | os.PathLike[str]], *, select: Sequence[str] | None = None,
          ignore: Sequence[str] | None = None, target_version: str | tuple[int, int] | None = None,
          preview: bool | None = None) -> list[Finding]:
    """The static checker's findings for files, folders or a string of source.

    A string that names no existing path and spans several lines is checked as
    source (reported as ``<string>``). Files that do not parse are skipped here;
    ``trainwell check`` reports them. ``preview`` also returns the findings
    whose premises are not all proven (default: the config's ``preview``).
    Lines and columns are 1-based, as ``trainwell check`` prints them.

    Example:
        >>> from trainwell import check
        >>> [f.code for f in check("import torch\\nstate = torch.load('m.pt')\\n", target_version="2.4")]
        ['TW502']
    """
    if isinstance(paths_or_source, str) and "\n" in paths_or_source and not os.path.exists(paths_or_source):
        codes = resolve_codes(select, ignore)
        if isinstance(target_version, str):
            target_version = config_mod.parse_version(target_version, "target_version")
        findings, _ = check_source(paths_or_source, "<string>", codes, target_version or config_mod.DEFAULT_TARGET, preview=bool(preview))
        return findings
    if isinstance(paths_or_source, (str, os.PathLike)):
        paths_or_source = [paths_or_source]
    return run(paths_or_source, select, ignore, target_version, preview=preview).findings
