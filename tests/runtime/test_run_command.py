"""`trainwell run` as a process: python's own conventions (argv, __main__, sys.path[0],
exit codes, tracebacks), the report, --strict, -m and --plot."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from trainwell.cli import main

BUGGY = textwrap.dedent(
    """\
    import os, sys
    import torch
    from torch import nn
    print("argv", sys.argv[1:], "main", __name__, "path0", sys.path[0] == os.path.dirname(os.path.abspath(__file__)))
    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(4):
        loss = model(torch.randn(8, 4)).pow(2).mean()
        loss.backward()
        optimizer.step()
    sys.exit(int(sys.argv[1]))
    """
)


def trainwell_run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", "import sys; from trainwell.cli import main; sys.exit(main())", "run", *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120)


def test_script_runs_as_python_would_with_report_and_plot(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(BUGGY)
    done = trainwell_run("--report", "out.json", "--plot", "out.png", "train.py", "3", "--lr", "0.1", cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    assert "argv ['3', '--lr', '0.1'] main __main__ path0 True" in done.stdout
    assert "train.py:10: TW101 zero-grad-missing (step 2)" in done.stderr  # first occurrence, when it happens
    assert "TW101  zero-grad-missing  train.py:10  2           3" in done.stderr  # the summary table
    report = json.loads((tmp_path / "out.json").read_text())
    assert report["exit_code"] == 3 and report["steps"] == 4
    [finding] = report["findings"]
    assert finding == {"code": "TW101", "name": "zero-grad-missing", "message": finding["message"],
                       "path": str(script), "line": 10, "step": 2, "count": 3}
    assert (tmp_path / "out.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_module_mode_and_a_failing_script(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "job.py").write_text("import sys\nprint('module argv', sys.argv[1:], __name__)\nraise KeyError('lost')\n")
    done = trainwell_run("-m", "pkg.job", "--epochs", "2", cwd=tmp_path)
    assert done.returncode == 1
    assert "module argv ['--epochs', '2'] __main__" in done.stdout
    assert "Traceback (most recent call last)" in done.stderr and "KeyError: 'lost'" in done.stderr
    assert 'job.py", line 3, in <module>' in done.stderr and "runpy" not in done.stderr  # the user's traceback only


def test_strict_turns_findings_into_exit_1(tmp_path: Path, capsys) -> None:
    script = tmp_path / "train.py"
    script.write_text(BUGGY)
    assert main(["run", str(script), "0"]) == 0
    assert main(["run", "--strict", str(script), "0"]) == 1
    assert main(["run", "--strict", str(script), "4"]) == 4  # the script's own failure code wins
    assert main(["run", "--strict", "--ignore", "TW101", str(script), "0"]) == 0
    capsys.readouterr()


def test_missing_script_is_a_one_line_error(tmp_path: Path, capsys) -> None:
    assert main(["run", str(tmp_path / "nope.py")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("trainwell: error: script not found") and "\n" not in err
