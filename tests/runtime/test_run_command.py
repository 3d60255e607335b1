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
                       "path": str(script), "line": 10, "step": 2, "count": 3, "count_of": "sampled occurrences"}
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


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert err.startswith("trainwell: error: ") and "\n" not in err and "Traceback" not in err, err
    return err


def test_what_python_could_not_start_is_one_line_before_the_script_runs(tmp_path: Path, capsys) -> None:
    assert main(["run", str(tmp_path / "nope.py")]) == 2
    assert "script not found" in one_line_error(capsys)
    assert main(["run", str(tmp_path)]) == 2
    assert "is a directory" in one_line_error(capsys)
    broken = tmp_path / "broken.py"
    broken.write_text("print('ran')\nfor x in range(3)\n    pass\n")
    assert main(["run", str(broken)]) == 1  # python's own code for a syntax error
    assert f"{broken}:2: the script does not parse" in one_line_error(capsys)
    script = tmp_path / "train.py"
    script.write_text("print('ran')\n")
    for option in ("--plot", "--report"):
        assert main(["run", option, "/nonexistent/x.png", str(script)]) == 2
        assert "'/nonexistent' does not exist" in one_line_error(capsys)  # and the script never ran


def test_a_report_that_cannot_be_written_keeps_the_scripts_exit_code(tmp_path: Path, capsys) -> None:
    (tmp_path / "out").mkdir()
    script = tmp_path / "train.py"
    script.write_text(f"import shutil, sys\nshutil.rmtree({str(tmp_path / 'out')!r})\nsys.exit(3)\n")
    assert main(["run", "--report", str(tmp_path / "out" / "r.json"), str(script)]) == 3
    err = capsys.readouterr().err
    assert "trainwell: error: cannot write the report" in err and "Traceback" not in err


def test_a_script_failing_before_training_says_so(tmp_path: Path, capsys) -> None:
    script = tmp_path / "train.py"
    script.write_text("import torch\nmodel = torch.nn.Linear(2, 2)\nraise SystemExit('no data')\n")
    assert main(["run", str(script)]) == 1
    err = capsys.readouterr().err
    assert "before its first training step" in err and "no findings" not in err


def test_the_watchers_frames_are_not_in_the_users_traceback(tmp_path: Path, capsys) -> None:
    script = tmp_path / "load.py"
    script.write_text("import io\nimport torch\ntorch.load(io.BytesIO(b'not a checkpoint'))\n")
    plain = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert main(["run", str(script)]) == plain.returncode == 1
    watched = capsys.readouterr().err
    assert "trainwell" not in watched.split("trainwell: the script stopped")[0]
    assert watched.startswith(plain.stderr)
