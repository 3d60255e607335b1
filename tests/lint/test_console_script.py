"""The one subprocess test: the installed console script, its exit code, and that it never imports torch."""

from __future__ import annotations

import subprocess
import sys


def test_console_script_exit_code_and_no_torch_import(tmp_path):
    bad = tmp_path / "train.py"
    bad.write_text("import torch\nstate = torch.load('model.pt')\n", encoding="utf-8")
    probe = (
        "import sys; from trainwell.cli import main; code = main(['check', sys.argv[1]]); "
        "print('torch imported' if 'torch' in sys.modules else 'torch not imported'); sys.exit(code)"
    )
    done = subprocess.run([sys.executable, "-c", probe, str(bad)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "TW502" in done.stdout and "torch not imported" in done.stdout
    script = subprocess.run(["trainwell", "check", "--format", "github", str(bad)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert script.returncode == 1 and script.stdout.startswith("::error file=")
    assert (tmp_path / ".trainwell_cache" / ".gitignore").is_file()  # cached by default, beside no pyproject.toml: the current folder
