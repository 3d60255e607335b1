"""`trainwell server`: the static checker as a language server (LSP over stdio, on pygls).

An editor sends a Python file's text as it is typed; the server checks that
text (not the file on disk) with the configuration ``[tool.trainwell]`` above
the file, and answers with diagnostics: the code, linked to the rule's page,
an error (a warning for advice, TW404/TW503/TW504, and for a preview finding), the message and the hint; a syntax
error while the file is typed is shown at its place (the findings return when the file parses again). A fix
is a code action titled with its safety. One project index per folder is
kept between edits, so a helper another file imports is parsed once; it is
dropped when a file is saved, as the helpers may have changed on disk.

Checks run on one worker thread, so the server keeps reading while a file is
checked: edits that arrive meanwhile are folded into one check of the newest
text, and a burst of keystrokes costs at most the check in flight and one more
(checked in turn, each edit's diagnostics would come later and later). A
shutdown first checks what is queued and sends its diagnostics.

LSP counts lines from 0 and characters in UTF-16 code units; findings count
both from 1 in characters (see :class:`~trainwell.diagnostic.Finding`).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any, Callable

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from trainwell import __version__
from trainwell.catalog import CATALOG
from trainwell.diagnostic import Edit, Finding
from trainwell.lint import config as config_mod
from trainwell.lint.index import ProjectIndex
from trainwell.lint.discover import discover, excluded
from trainwell.lint.runner import check_source, resolve_codes

SOURCE = "trainwell"
FINISH_S = 30.0  # how long a shutdown waits for the checks still queued
_SAFETY = {"safe": "safe fix", "unsafe": "unsafe fix: may change behaviour"}


class _LiveIndex(ProjectIndex):
    """The project index, except that an open document is never answered from it: its text is the editor's."""

    def parsed(self, path: Path) -> Any:
        return None

    def keep(self, ctx: Any) -> None:
        """The parse of an edited document is of the editor's text: never kept for its importers."""


class TrainwellServer(LanguageServer):
    """Checks open Python files; keeps each document's latest findings for its code actions."""

    def __init__(self) -> None:
        super().__init__("trainwell", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.findings: dict[str, tuple[int | None, list[Finding]]] = {}  # uri -> (the version checked, its findings)
        self._indexes: dict[Path, _LiveIndex] = {}
        self._waiting: dict[str, tuple[str, int | None]] = {}  # uri -> (text, version) to check, the newest only
        self._open: set[str] = set()
        self._forget = False  # a file was saved: the worker drops the indexes before its next check
        self._wake = threading.Condition()
        self._checking = False  # the worker is checking a text taken from _waiting
        self._done: deque[tuple[str, int | None, list[types.Diagnostic]]] = deque()  # checked, not yet published
        self._loop: asyncio.AbstractEventLoop | None = None
        self._worker: threading.Thread | None = None

    def schedule(self, uri: str) -> None:
        """Queue the document's current text for the worker (on the event loop: a snapshot of text and version)."""
        document = self.workspace.get_text_document(uri)
        self._loop = asyncio.get_running_loop()
        with self._wake:
            self._open.add(uri)
            self._waiting[uri] = (document.source, document.version)  # an older text still waiting is replaced
            self._wake.notify()
        if self._worker is None:
            self._worker = threading.Thread(target=self._work, name="trainwell-check", daemon=True)
            self._worker.start()

    def forget_indexes(self) -> None:
        """Helpers on disk may have changed (a save): parse them again from the next check on."""
        with self._wake:
            self._forget = True

    def close(self, uri: str) -> None:
        with self._wake:
            self._open.discard(uri)
            self._waiting.pop(uri, None)
        self.findings.pop(uri, None)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def finish(self) -> None:
        """Check every text queued so far and send its diagnostics, before the server answers a shutdown: a client
        that opens a file and shuts the server down at once still gets them (at most ``FINISH_S`` seconds)."""
        deadline = time.monotonic() + FINISH_S
        with self._wake:
            while (self._waiting or self._checking) and time.monotonic() < deadline:
                self._wake.wait(deadline - time.monotonic())
        self._deliver()

    def _work(self) -> None:
        while True:
            with self._wake:
                while not self._waiting:
                    self._wake.wait()
                uri = next(iter(self._waiting))
                source, version = self._waiting.pop(uri)
                self._checking = True
                if self._forget:
                    self._indexes.clear()
                    self._forget = False
            diagnostics = None
            try:
                diagnostics = self.diagnose(uri, source, version)
            except Exception:  # noqa: BLE001 - a checker bug must not end the worker: the next edit is checked again
                logging.getLogger(__name__).exception("checking %s failed", uri)
            with self._wake:
                if diagnostics is not None:
                    self._done.append((uri, version, diagnostics))
                self._checking = False
                self._wake.notify_all()  # a shutdown may be waiting for the queue to empty
            self._on_loop(self._deliver)

    def _deliver(self) -> None:
        """Publish what the worker checked, in order (on the event loop, where pygls writes its messages)."""
        while True:
            with self._wake:
                if not self._done:
                    return
                uri, version, diagnostics = self._done.popleft()
                if uri not in self._open:
                    continue  # closed while it was checked: its diagnostics were cleared
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version))

    def _on_loop(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run ``fn`` on the event loop, where pygls writes its messages (the worker never writes itself)."""
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(fn, *args)

    def diagnose(self, uri: str, source: str, version: int | None) -> list[types.Diagnostic]:
        """Check one text of the document; keep its findings for code actions and return its diagnostics."""
        path = to_fs_path(uri) or uri
        lines = source.splitlines()
        findings, problems = self._check(source, path)
        self.findings[uri] = (version, findings)
        return [_problem_diagnostic(p, lines) for p in problems] + [_diagnostic(f, lines) for f in findings]

    def _check(self, source: str, path: str) -> tuple[list[Finding], list[Any]]:
        """The findings of the file, and the problems that stopped it being checked (a syntax error while it is typed)."""
        try:
            config = config_mod.load(Path(path))
            codes = resolve_codes(config.select, config.ignore)
        except Exception as error:  # noqa: BLE001 - a broken pyproject.toml is shown in the editor, not a dead server
            self._on_loop(self.window_show_message, types.ShowMessageParams(types.MessageType.Error, f"trainwell: {error}"))
            return [], []
        if config.exclude and excluded(Path(path), config.exclude, config.root):
            return [], []  # as `trainwell check .` skips it
        target = config.target_version or config.declared_for(Path(path)) or config_mod.DEFAULT_TARGET
        root = (config.root or Path(path).parent).resolve()
        if root not in self._indexes:
            files = [p for p in discover([root], config.exclude, config.root) if p.suffix == ".py"][:20_000]  # as `check .` walks
            self._indexes[root] = _LiveIndex(files, [root], target)
        findings, problems = check_source(source, path, codes, target, preview=config.preview, project=self._indexes[root])
        # a helper's finding belongs to the helper's file; a rule's internal error is the server's log's, not the user's text's
        return [f for f in findings if f.path == path], [p for p in problems if p.kind != "internal-error"]


def _position(lines: list[str], line: int, column: int) -> types.Position:
    """An LSP position from a 1-based line and a 0-based character column (UTF-16 units, as LSP counts)."""
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    return types.Position(line=max(line - 1, 0), character=len(text[:column].encode("utf-16-le")) // 2)


def _diagnostic(finding: Finding, lines: list[str]) -> types.Diagnostic:
    end_line = finding.end_line or finding.line
    end_column = (finding.end_column or finding.column + 1) - 1
    page = Path(__file__).resolve().parents[1] / "catalog" / "rules" / CATALOG[finding.code].page_name
    message = finding.message + (f"\nhint: {finding.hint}" if finding.hint else "")
    return types.Diagnostic(
        range=types.Range(_position(lines, finding.line, finding.column - 1), _position(lines, end_line, end_column)),
        message=("[preview] " if finding.preview else "") + message,
        severity=types.DiagnosticSeverity.Warning if finding.severity == "warning" else types.DiagnosticSeverity.Error,
        code=finding.code,
        code_description=types.CodeDescription(href=page.as_uri()),
        source=SOURCE,
    )


def _problem_diagnostic(problem: Any, lines: list[str]) -> types.Diagnostic:
    """A syntax error (or an unknown noqa code) at its place, to the end of its line: the file's findings wait for it."""
    text = lines[problem.line - 1] if 0 < problem.line <= len(lines) else ""
    start = _position(lines, problem.line, problem.column - 1)
    end = _position(lines, problem.line, max(len(text), problem.column))
    return types.Diagnostic(range=types.Range(start, end), message=f"{problem.kind.replace('-', ' ')}: {problem.message}",
                            severity=types.DiagnosticSeverity.Error, source=SOURCE)


def _text_edit(edit: Edit, lines: list[str]) -> types.TextEdit:
    return types.TextEdit(types.Range(_position(lines, edit.line, edit.column), _position(lines, edit.end_line, edit.end_column)), edit.content)


def code_actions(server: TrainwellServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    """A quick fix per finding in the requested range that has a fix ``--fix`` could apply, titled with its safety;
    none while the document's newest text is still being checked (the edits would be placed in an older text)."""
    uri = params.text_document.uri
    document = server.workspace.get_text_document(uri)
    version, findings = server.findings.get(uri, (None, []))
    if version != document.version:
        return []
    lines = document.source.splitlines()
    wanted = params.range
    actions = []
    for finding in findings:
        if finding.fix is None or finding.fix.applicability == "display":
            continue
        diagnostic = _diagnostic(finding, lines)
        if (diagnostic.range.end.line, diagnostic.range.end.character) < (wanted.start.line, wanted.start.character) or \
                (diagnostic.range.start.line, diagnostic.range.start.character) > (wanted.end.line, wanted.end.character):
            continue
        safety = finding.fix.applicability
        actions.append(types.CodeAction(
            title=f"{finding.code}: {finding.fix.message} ({_SAFETY[safety]})",
            kind=types.CodeActionKind.QuickFix,
            diagnostics=[diagnostic],
            is_preferred=safety == "safe",
            edit=types.WorkspaceEdit(changes={uri: [_text_edit(e, lines) for e in finding.fix.edits]}),
        ))
    return actions


def build() -> TrainwellServer:
    """The server with its features registered."""
    server = TrainwellServer()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: TrainwellServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: TrainwellServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: TrainwellServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.forget_indexes()  # helpers on disk may have changed
        ls.schedule(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: TrainwellServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.close(params.text_document.uri)

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: TrainwellServer, params: None) -> None:
        ls.finish()

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]))
    def code_action(ls: TrainwellServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        return code_actions(ls, params)

    return server
