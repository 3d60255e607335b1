"""How long an editor waits for `trainwell server`'s diagnostics after an edit of a 2,000-line file.

    python benchmarks/lsp_latency.py             # 2,000 lines, 20 edits
    python benchmarks/lsp_latency.py --lines 5000 --edits 40
    python benchmarks/lsp_latency.py --file path/to/train.py   # a real script

The file is the case corpus's training scripts one after another (real loops,
many findings: the worst case, every function a training loop), or ``--file``.
A pygls client starts the server over stdio, opens the file,
then sends whole-text changes (a comment line typed at the top each time: valid
Python whatever the file holds) and
times each change until its diagnostics arrive. The baseline, measured in the
same run: ``ast.parse`` of the same text in this process, a floor for any
analysis of it.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parents[1]


def corpus(lines: int) -> str:
    parts, count = [], 0
    files = sorted((ROOT / "tests" / "cases").glob("TW*/*.py"))
    while count < lines:
        for path in files:
            text = "\n".join(line for line in path.read_text(encoding="utf-8").splitlines() if "__future__" not in line) + "\n"
            parts.append(text)
            count += text.count("\n")
            if count >= lines:
                break
    return "".join(parts)


async def measure(text: str, edits: int) -> list[float]:
    client = LanguageClient("lsp-latency", "1")
    published: asyncio.Queue[types.PublishDiagnosticsParams] = asyncio.Queue()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def _publish(params: types.PublishDiagnosticsParams) -> None:
        published.put_nowait(params)

    with tempfile.TemporaryDirectory() as folder:
        await client.start_io(sys.executable, "-m", "trainwell", "server", cwd=folder, start_new_session=True)
        await client.initialize_async(types.InitializeParams(capabilities=types.ClientCapabilities(), root_uri=Path(folder).as_uri()))
        client.initialized(types.InitializedParams())
        uri = (Path(folder) / "train.py").as_uri()
        client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, text)))
        first = await asyncio.wait_for(published.get(), 120)
        print(f"diagnostics on open: {len(first.diagnostics)}")
        times = []
        lines = text.splitlines(keepends=True)
        for version in range(2, edits + 2):
            lines.insert(0, f"# edit {version}\n")
            start = time.perf_counter()
            client.text_document_did_change(types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(uri=uri, version=version), [types.TextDocumentContentChangeWholeDocument(text="".join(lines))]))
            while (await asyncio.wait_for(published.get(), 120)).version != version:
                pass
            times.append(time.perf_counter() - start)
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--edits", type=int, default=20)
    parser.add_argument("--file", type=Path, help="time this file instead of the case corpus")
    args = parser.parse_args()
    text = args.file.read_text(encoding="utf-8") if args.file else corpus(args.lines)
    start = time.perf_counter()
    for _ in range(5):
        ast.parse(text)
    parse = (time.perf_counter() - start) / 5
    times = asyncio.run(measure(text, args.edits))
    median = statistics.median(times)
    print(f"{text.count(chr(10))} lines, {args.edits} edits: diagnostics after an edit median {median * 1000:.1f} ms, "
          f"max {max(times) * 1000:.1f} ms; ast.parse of the text {parse * 1000:.1f} ms (ratio {median / parse:.1f}x)")


if __name__ == "__main__":
    main()
