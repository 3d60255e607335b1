"""`pip install trainwell` without torch: check, rule and server work; the training commands say what to install."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import run

BAD_LOAD = "import torch\nstate = torch.load('model.pt')\n"


def _lsp(*messages: dict) -> bytes:
    out = b""
    for message in messages:
        body = json.dumps(message).encode()
        out += b"Content-Length: %d\r\n\r\n" % len(body) + body
    return out


def test_the_light_install_has_no_torch_and_checks(light_env: Path, tmp_path: Path) -> None:
    python, trainwell = str(light_env / "python"), str(light_env / "trainwell")
    site = run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
    installed = {p.name.split("-")[0].lower() for p in Path(site).glob("*.dist-info")}
    assert "trainwell" in installed and not installed & {"torch", "numpy", "scikit_learn", "matplotlib", "pyyaml", "tqdm"}, installed
    assert run([python, "-c", "import torch"]).returncode == 1

    (tmp_path / "train.py").write_text(BAD_LOAD, encoding="utf-8")
    (tmp_path / "env").mkdir()
    (tmp_path / "env" / "pyvenv.cfg").write_text("home = /usr\n", encoding="utf-8")
    (tmp_path / "env" / "x.py").write_text(BAD_LOAD, encoding="utf-8")
    check = run([trainwell, "check", "--no-cache", "."], cwd=tmp_path)
    assert check.returncode == 1 and check.stdout.startswith("train.py:2:9: TW502 ") and "env" not in check.stdout, check.stderr

    rule = run([trainwell, "rule", "TW101"], cwd=tmp_path)
    assert rule.returncode == 0 and "zero-grad-missing" in rule.stdout

    uri = (tmp_path / "train.py").as_uri()
    server = run([trainwell, "server"], cwd=tmp_path, timeout=60, text=False, input=_lsp(
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "method": "textDocument/didOpen",
         "params": {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": BAD_LOAD}}},
        {"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": None},
        {"jsonrpc": "2.0", "method": "exit", "params": None},
    ))
    assert server.returncode == 0, server.stderr
    assert b'"TW502"' in server.stdout and b'"textDocument/publishDiagnostics"' in server.stdout

    estimate = run([trainwell, "memory", "--params", "1B", "--optimizer", "adamw"], cwd=tmp_path)
    assert estimate.returncode == 0 and "optimizer state" in estimate.stdout  # arithmetic: no torch needed
    for argv in (["fit"], ["run", "train.py"], ["verify-resume"]):
        failed = run([trainwell, *argv], cwd=tmp_path)
        assert failed.returncode == 2, (argv, failed.stderr)
        assert failed.stderr.count("\n") == 1 and 'pip install "trainwell[torch]"' in failed.stderr, failed.stderr
