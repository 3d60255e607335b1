"""The one subprocess test: the installed console script (which ends a check without the interpreter's teardown: its
report must still be written whole, its exit code kept), and what a check imports."""

from __future__ import annotations

import os
import subprocess
import sys


# What a check of one file never imports: torch, the other subcommands' code (the Trainer's YAML config and launcher),
# the process pool and the gitignore reader (a pre-commit run of a commit's files is mostly start-up)
_NOT_IMPORTED = ("torch", "yaml", "trainwell.fit.config", "trainwell.fit.launch", "trainwell.runtime", "multiprocessing",
                 "concurrent.futures", "pathspec")


def test_console_script_exit_code_and_what_a_check_imports(tmp_path):
    bad = tmp_path / "train.py"
    bad.write_text("import torch\nstate = torch.load('model.pt')\n", encoding="utf-8")
    probe = (
        "import sys; from trainwell.cli import main; code = main(['check', sys.argv[1]]); "
        f"print('imported:', [m for m in {_NOT_IMPORTED!r} if m in sys.modules]); sys.exit(code)"
    )
    done = subprocess.run([sys.executable, "-c", probe, str(bad)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "TW502" in done.stdout and "imported: []" in done.stdout
    buffered = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # a pipe's output waits in a buffer
    script = subprocess.run(["trainwell", "check", "--format", "github", str(bad)], capture_output=True, text=True, timeout=120,
                            cwd=tmp_path, env=buffered)
    assert script.returncode == 1 and script.stdout.startswith("::error file=")
    assert (tmp_path / ".trainwell_cache" / ".gitignore").is_file()  # cached by default, beside no pyproject.toml: the current folder
