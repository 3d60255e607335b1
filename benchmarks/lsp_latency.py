"""How long an editor waits for `trainwell server`'s diagnostics after an edit of a 2,000-line file.

    python benchmarks/lsp_latency.py             # 2,000 lines, 20 edits
    python benchmarks/lsp_latency.py --lines 5000 --edits 40
    python benchmarks/lsp_latency.py --file path/to/train.py   # a real script
    python benchmarks/lsp_latency.py --typing 80   # an edit every 80 ms, not waiting for diagnostics

The file is the case corpus's training scripts one after another (real loops,
many findings: the worst case, every function a training loop), or ``--file``.
A pygls client starts the server over stdio, opens the file,
then sends whole-text changes (a comment line typed at the top each time: valid
Python whatever the file holds) and
times each change until its diagnostics arrive. With ``--typing MS`` the edits
come every MS milliseconds whether or not diagnostics came (a typist), and each
edit is timed until diagnostics of its text or a newer one arrive: what the
editor shows then covers that keystroke. The baseline, measured in the
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


async def measure(text: str, edits: int, typing: float | None = None) -> tuple[list[float], int]:
    """Seconds from each edit to the first diagnostics of its version or a newer one; and how many were published."""
    client = LanguageClient("lsp-latency", "1")
    arrived: list[tuple[float, int]] = []  # (when, version) of each publish
    news = asyncio.Event()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def _publish(params: types.PublishDiagnosticsParams) -> None:
        arrived.append((time.perf_counter(), params.version))
        news.set()

    async def covered(version: int) -> float:
        while not any(v >= version for _, v in arrived):
            news.clear()
            await asyncio.wait_for(news.wait(), 120)
        return next(when for when, v in arrived if v >= version)

    with tempfile.TemporaryDirectory() as folder:
        await client.start_io(sys.executable, "-m", "trainwell", "server", cwd=folder, start_new_session=True)
        await client.initialize_async(types.InitializeParams(capabilities=types.ClientCapabilities(), root_uri=Path(folder).as_uri()))
        client.initialized(types.InitializedParams())
        uri = (Path(folder) / "train.py").as_uri()
        client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, text)))
        await covered(1)
        print(f"diagnostics on open: published {len(arrived)}")
        arrived.clear()
        sent: dict[int, float] = {}
        lines = text.splitlines(keepends=True)
        for version in range(2, edits + 2):
            lines.insert(0, f"# edit {version}\n")
            sent[version] = time.perf_counter()
            client.text_document_did_change(types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(uri=uri, version=version), [types.TextDocumentContentChangeWholeDocument(text="".join(lines))]))
            if typing is None:
                await covered(version)
            else:
                await asyncio.sleep(typing)
        times = [await covered(version) - sent[version] for version in sent]
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()
    return times, len(arrived)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--edits", type=int, default=20)
    parser.add_argument("--file", type=Path, help="time this file instead of the case corpus")
    parser.add_argument("--typing", type=float, metavar="MS", help="an edit every MS milliseconds, not waiting for diagnostics")
    args = parser.parse_args()
    text = args.file.read_text(encoding="utf-8") if args.file else corpus(args.lines)
    start = time.perf_counter()
    for _ in range(5):
        ast.parse(text)
    parse = (time.perf_counter() - start) / 5
    times, published = asyncio.run(measure(text, args.edits, args.typing / 1000 if args.typing else None))
    median = statistics.median(times)
    how = f"an edit every {args.typing:g} ms" if args.typing else "each after the last one's diagnostics"
    print(f"{text.count(chr(10))} lines, {args.edits} edits ({how}, {published} diagnostics published): diagnostics covering "
          f"an edit median {median * 1000:.1f} ms, max {max(times) * 1000:.1f} ms, last edit {times[-1] * 1000:.1f} ms; "
          f"ast.parse of the text {parse * 1000:.1f} ms (ratio {median / parse:.1f}x)")


if __name__ == "__main__":
    main()
