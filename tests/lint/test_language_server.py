"""`trainwell server` as an editor sees it: a real LSP client (pygls) drives the server process over stdio."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest

pytest.importorskip("pygls")
from lsprotocol import types  # noqa: E402
from pygls.lsp.client import LanguageClient  # noqa: E402

BUGGY = """\
import torch
from torch import nn

model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
losses, kept = [], []
state = torch.load("m.pt")
for step in range(4):
    optimizer.zero_grad()
    loss = model(torch.randn(8, 4)).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss)
    kept.append(loss)  # noqa: TW204 -- plotted later
"""


def _apply(text: str, edits: list[types.TextEdit]) -> str:
    """The client's side of a WorkspaceEdit (ASCII text: UTF-16 units are characters)."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        start = starts[edit.range.start.line] + edit.range.start.character
        end = starts[edit.range.end.line] + edit.range.end.character
        text = text[:start] + edit.new_text + text[end:]
    return text


async def _session(folder: Path) -> None:
    client = LanguageClient("trainwell-test", "1")
    published: asyncio.Queue[types.PublishDiagnosticsParams] = asyncio.Queue()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def _publish(params: types.PublishDiagnosticsParams) -> None:
        published.put_nowait(params)

    await client.start_io(sys.executable, "-c", "import sys; from trainwell.cli import main; sys.exit(main())", "server", "--stdio",
                          cwd=str(folder), start_new_session=True)
    try:
        result = await asyncio.wait_for(client.initialize_async(types.InitializeParams(
            capabilities=types.ClientCapabilities(), root_uri=folder.as_uri())), 60)
        assert result.server_info.name == "trainwell"
        client.initialized(types.InitializedParams())

        uri = (folder / "train.py").as_uri()
        client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, BUGGY)))
        params = await asyncio.wait_for(published.get(), 60)
        # [tool.trainwell] ignores TW502 here; `# noqa: TW204` silences line 14: one diagnostic is left
        [diagnostic] = params.diagnostics
        assert diagnostic.code == "TW204" and diagnostic.source == "trainwell"
        assert diagnostic.severity == types.DiagnosticSeverity.Error
        assert (diagnostic.range.start.line, diagnostic.range.start.character, diagnostic.range.end.line, diagnostic.range.end.character) \
            == (12, 4, 12, 23)  # `losses.append(loss)`, 0-based
        assert diagnostic.code_description.href.endswith("TW204-loss-tensor-kept.md") and "hint: " in diagnostic.message

        actions = await asyncio.wait_for(client.text_document_code_action_async(types.CodeActionParams(
            types.TextDocumentIdentifier(uri), diagnostic.range, types.CodeActionContext([diagnostic]))), 60)
        [action] = actions
        assert action.title == "TW204: use `loss.detach()` (safe fix)" and action.is_preferred
        fixed = _apply(BUGGY, action.edit.changes[uri])
        assert "    losses.append(loss.detach())\n" in fixed

        client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=2), [types.TextDocumentContentChangeWholeDocument(text=fixed)]))
        params = await asyncio.wait_for(published.get(), 60)
        assert list(params.diagnostics) == [] and params.version == 2

        # a burst of edits to a long file: edits that arrive while one is checked are folded into one check of the newest
        loop = BUGGY.split("for step", 1)[1].replace("  # noqa: TW204 -- plotted later", "")
        long = BUGGY + "".join(f"for step_{i}" + loop for i in range(150))
        burst = [long + f"# edit {i}\n" for i in range(9)] + [long.replace("losses.append(loss)", "losses.append(loss.detach())")]
        for version, text in enumerate(burst, start=3):
            client.text_document_did_change(types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(uri=uri, version=version), [types.TextDocumentContentChangeWholeDocument(text=text)]))
        versions = []
        while not versions or versions[-1] != 2 + len(burst):
            params = await asyncio.wait_for(published.get(), 120)
            versions.append(params.version)
        assert versions == sorted(versions) and len(versions) < len(burst)  # in order, and fewer checks than edits
        newest = burst[-1].splitlines()  # its losses are detached: each added loop's `kept.append(loss)` is left
        assert len(params.diagnostics) == 150 and {newest[d.range.start.line].strip() for d in params.diagnostics} == {"kept.append(loss)"}

        # another folder, no ignore: TW502's fix is offered as unsafe
        other = (folder / "other" / "load.py").as_uri()
        client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(other, "python", 1, BUGGY)))
        params = await asyncio.wait_for(published.get(), 60)
        load = next(d for d in params.diagnostics if d.code == "TW502")
        actions = await asyncio.wait_for(client.text_document_code_action_async(types.CodeActionParams(
            types.TextDocumentIdentifier(other), load.range, types.CodeActionContext([load]))), 60)
        assert [a.title for a in actions] == ["TW502: set weights_only=True (may break: a checkpoint holding argparse.Namespace, "
                                              "numpy arrays or pickled modules then fails to load) (unsafe fix: may change behaviour)"]
        assert not actions[0].is_preferred

        await asyncio.wait_for(client.shutdown_async(None), 60)
        client.exit(None)
        await asyncio.wait_for(client._server.wait(), 60)  # it exits on `exit`
    finally:
        if client._server.returncode is None:  # a failed assertion: end the server's process group, do not wait for it
            os.killpg(client._server.pid, signal.SIGKILL)
        await client.stop()


def test_server_over_stdio_diagnoses_fixes_and_clears(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.trainwell]\nignore = ["TW502"]\n', encoding="utf-8")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "pyproject.toml").write_text("[tool.trainwell]\n", encoding="utf-8")
    asyncio.run(_session(tmp_path))


def test_excluded_files_and_noqa_are_honoured_in_process(tmp_path: Path) -> None:
    from trainwell.lint.language_server import TrainwellServer

    (tmp_path / "pyproject.toml").write_text('[tool.trainwell]\nexclude = ["fixtures"]\n', encoding="utf-8")
    (tmp_path / "fixtures").mkdir()
    server = TrainwellServer()
    findings, problems = server._check(BUGGY, str(tmp_path / "train.py"))
    assert [f.code for f in findings] == ["TW502", "TW204"] and problems == []
    assert server._check(BUGGY, str(tmp_path / "fixtures" / "train.py")) == ([], [])


def test_a_syntax_error_being_typed_is_shown_and_advice_is_a_warning(tmp_path: Path) -> None:
    from trainwell.diagnostic import Finding
    from trainwell.lint.language_server import TrainwellServer, _diagnostic, _problem_diagnostic

    typing = BUGGY.replace("    optimizer.step()\n", "    optimizer.step(\n")
    findings, problems = TrainwellServer()._check(typing, str(tmp_path / "train.py"))
    [problem] = problems
    diagnostic = _problem_diagnostic(problem, typing.splitlines())
    assert diagnostic.severity == types.DiagnosticSeverity.Error and diagnostic.message.startswith("syntax error: ")
    assert diagnostic.range.start.line == 11 and diagnostic.source == "trainwell"  # `optimizer.step(` never closed, 0-based
    lines = ["x = 1"]
    assert _diagnostic(Finding("TW503", "sync", "a.py", 1, 1, 1, 6), lines).severity == types.DiagnosticSeverity.Warning
    assert _diagnostic(Finding("TW204", "kept", "a.py", 1, 1, 1, 6), lines).severity == types.DiagnosticSeverity.Error


def test_the_project_index_walks_the_project_as_check_does(tmp_path: Path) -> None:
    from trainwell.lint.language_server import TrainwellServer

    (tmp_path / "pyproject.toml").write_text("[tool.trainwell]\n", encoding="utf-8")
    for name in ("env/lib/site.py", "helpers.py", "ignored/gen.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "env" / "pyvenv.cfg").write_text("home = /usr\n", encoding="utf-8")
    (tmp_path / ".gitignore").write_text("ignored/\n", encoding="utf-8")
    server = TrainwellServer()
    server._check(BUGGY, str(tmp_path / "train.py"))
    [index] = server._indexes.values()
    assert sorted(p.name for p in index._files) == ["helpers.py"]


def test_quick_fixes_are_offered_only_for_the_text_that_was_checked(tmp_path: Path) -> None:
    from pygls.workspace import Workspace

    from trainwell.lint.language_server import TrainwellServer, code_actions

    server = TrainwellServer()
    server.protocol._workspace = Workspace(None)
    uri = (tmp_path / "train.py").as_uri()
    server.workspace.put_text_document(types.TextDocumentItem(uri, "python", 1, BUGGY))
    server.diagnose(uri, BUGGY, 1)
    whole = types.Range(types.Position(0, 0), types.Position(len(BUGGY.splitlines()), 0))
    ask = types.CodeActionParams(types.TextDocumentIdentifier(uri), whole, types.CodeActionContext([]))
    assert {a.title.split(":")[0] for a in code_actions(server, ask)} == {"TW204", "TW502"}
    server.workspace.put_text_document(types.TextDocumentItem(uri, "python", 2, "import torch\n" + BUGGY))  # typed, not yet checked
    assert code_actions(server, ask) == []  # those edits would land one line off in the newer text
