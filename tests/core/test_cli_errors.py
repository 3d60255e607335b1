"""Every mistake a user can make on the command line: one line, exit code 2, nothing written.

The table runs in-process (``main([...])``); two true subprocess checks at the
end cover what only a real process shows (the console script's exit status,
and the launcher of ``fit --nproc`` summing up its workers).
"""

import hashlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from trainwell import __version__
from trainwell.cli import main

NO_CUDA = pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")

FACTORIES = """
import torch
from torch import nn

def make_model():
    return nn.Linear(4, 3)

def make_data():
    x = torch.randn(32, 4)
    return (x, torch.randint(0, 3, (32,))), None
"""

CASES = [
    # fit: values out of range, named by their flag
    (["fit", "--batch-size", "0"], "--batch-size 0: must be at least 1"),
    (["fit", "--accumulate", "0"], "--accumulate 0: must be at least 1"),
    (["fit", "--nproc", "0"], "--nproc 0: must be at least 1"),
    (["fit", "--max-epochs", "0"], "--max-epochs 0: must be at least 1"),
    (["fit", "--max-epochs", "two"], "--max-epochs two: expected an integer"),
    (["fit", "--seed", "-1"], "--seed -1: must be between 0 and"),
    (["fit", "--keep-last", "0"], "--keep-last 0: must be at least 1 (or none"),
    (["fit", "--clip-grad-norm", "0"], "--clip-grad-norm 0.0: must be a positive number"),
    (["fit", "--log-every", "-3"], "--log-every -3: must be at least 1"),
    (["fit", "--precision", "8"], "--precision 8: must be one of 32, bf16-mixed, 16-mixed"),
    (["fit", "--strategy", "zero"], "--strategy zero: must be one of auto, ddp, fsdp, none"),
    (["fit", "--threads", "0"], "--threads 0: must be at least 1"),
    (["fit", "--num-workers", "-1"], "--num-workers -1: must be at least 0"),
    (["fit", "--eval-batch-size", "0"], "--eval-batch-size 0: must be at least 1"),
    (["fit", "--metric", "f1"], "metric 'f1': 'f1' is not a built-in metric"),
    (["fit", "--loss", "Foo"], "loss 'Foo' is not in torch.nn"),
    (["fit", "--monitor", "bogus"], "--monitor bogus is not in the epoch records; use one of"),
    (["fit", "--nproc", "2", "--device", "tpu"], "--device tpu: not a device"),
    # fit: several machines
    (["fit", "--nnodes", "0"], "--nnodes 0: must be at least 1"),
    (["fit", "--node-rank", "1"], "--node-rank 1: must be below the number of machines, 1; pass --nnodes N"),
    (["fit", "--nnodes", "2", "--node-rank", "2", "--rdzv-endpoint", "head:29500", "--run-dir", "r"],
     "--node-rank 2: must be below the number of machines, 2 (--nnodes); machines are numbered 0 to 1"),
    (["fit", "--nnodes", "2", "--run-dir", "r"], "--nnodes 2: needs --rdzv-endpoint HOST:PORT too"),
    (["fit", "--nnodes", "2", "--rdzv-endpoint", "head"], "--rdzv-endpoint head: expected HOST:PORT"),
    (["fit", "--rdzv-endpoint", "head:99999"], "--rdzv-endpoint head:99999: port 99999 is not between"),
    (["fit", "--nnodes", "2", "--rdzv-endpoint", "head:29500"],
     "--nnodes 2: pass --run-dir DIR too, a folder on a filesystem every machine shares"),
    (["fit", "--config", "nodes.yaml"],
     "nodes.yaml: node_rank: 3 must be below the number of machines, 2 (nodes.yaml: nnodes)"),
    (["fit", "--nnodes", "2", "--rdzv-endpoint", "head:29500", "--resume", "nowhere"],
     "--resume nowhere: no such file or directory on this machine"),
    # fit: optimizer and scheduler arguments
    (["fit", "--lr", "-1"], "--lr -1: optimizer AdamW refuses it: Invalid learning rate: -1"),
    (["fit", "--lr", "fast"], "--lr fast: expected a number, got 'fast'"),
    (["fit", "--optimizer-arg", "weight_decay=abc"],
     "--optimizer-arg weight_decay=abc: expected a number, got 'abc'"),
    (["fit", "--optimizer-arg", "weight_decay=-1"], "--optimizer-arg weight_decay=-1: optimizer AdamW refuses it"),
    (["fit", "--optimizer-arg", "lrate=0.1"], "--optimizer-arg lrate=0.1: unknown argument of optimizer AdamW"),
    (["fit", "--optimizer-arg", "novalue"], "--optimizer-arg 'novalue': expected KEY=VALUE"),
    (["fit", "--optimizer", "Adamm"], "optimizer 'Adamm' is not in torch.optim (did you mean 'Adam'?)"),
    (["fit", "--scheduler-arg", "max_lr=high"], "--scheduler-arg max_lr=high: expected a number"),
    (["fit", "--scheduler", "StepLR", "--scheduler-arg", "step_size=x"],
     "--scheduler-arg step_size=x: expected a number, got 'x'"),
    (["fit", "--scheduler", "OneCycleLR", "--scheduler-arg", "max_lr=0.1",
      "--scheduler-arg", "anneal_strategy=sin"], "--scheduler-arg anneal_strategy=sin: expected one of cos, linear"),
    (["fit", "--scheduler", "StepLR"], "scheduler StepLR: missing required argument(s) step_size"),
    # fit: devices
    pytest.param(["fit", "--device", "cuda"], "--device cuda: this PyTorch", marks=NO_CUDA),
    (["fit", "--device", "tpu"], "--device tpu: not a device; use cpu, cuda, cuda:N or mps"),
    (["fit", "--device", "meta"], "--device meta: trainwell trains on cpu, cuda or mps"),
    # fit: files
    (["fit", "--run-dir", "afile"], "--run-dir afile: is a file, not a directory"),
    (["fit", "--run-dir", "afile/sub"], "--run-dir afile/sub: cannot be created: afile is a file"),
    (["fit", "--config", sys.executable], "not a text file"),
    (["fit", "--config", "empty.yaml"], "empty.yaml is empty"),
    (["fit", "--config", "comments.yaml"], "comments.yaml is empty"),
    (["fit", "--config", "list.yaml"], "the config must be a mapping"),
    (["fit", "--config", "missing.yaml"], "cannot read config missing.yaml"),
    # a file's keys are named as keys of that file, not as flags
    (["fit", "--config", "zero.yaml"], "zero.yaml: batch_size: 0 must be at least 1"),
    (["fit", "--config", "negative-lr.yaml"],
     "negative-lr.yaml: optimizer: lr: optimizer SGD refuses it: Invalid learning rate: -1"),
    (["fit", "--config", "."], "cannot read config ."),
    (["fit", "--model", "./missing.py:make", "--data", "./missing.py:make"],
     "model './missing.py:make': no such file './missing.py'"),
    (["fit", "--model", "./factories.py:nope", "--data", "./factories.py:make_data"],
     "module './factories.py' has no attribute 'nope'"),
    (["fit", "--model", "nocolon", "--data", "nocolon"], "is not 'module:function'"),
    (["fit", "--model", "./factories.py:make_model"], "'data' is missing"),
    (["fit", "--resume", "nowhere"], "--resume nowhere: no such file or directory"),
    (["fit", "--resume", "emptyrun"], "--resume emptyrun: no checkpoint found"),
    (["fit", "--bogus"], "unrecognized arguments: --bogus"),
    (["fit", "--scheduler-interval", "hour"], "argument --scheduler-interval: invalid choice: 'hour'"),
    # verify-resume
    (["verify-resume", "--workdir", "afile"], "--workdir afile: is a file"),
    pytest.param(["verify-resume", "--device", "cuda"], "--device cuda: this PyTorch", marks=NO_CUDA),
    (["verify-resume", "--device", "tpu"], "--device tpu: not a device"),
    (["verify-resume", "--steps", "1"], "--steps 1: must be at least 2"),
    (["verify-resume", "--stop-at", "0"], "--stop-at 0: must be at least 1"),
    (["verify-resume", "--model", "./factories.py:make_model", "--data", "./factories.py:make_data",
      "--steps", "500"], "--steps 500: the run is only 10 optimizer steps long"),
    (["verify-resume", "--model", "./factories.py:make_model", "--data", "./factories.py:make_data",
      "--stop-at", "10"], "--stop-at 10: must be between 1 and 9"),
    (["verify-resume", "--config", "empty.yaml"], "empty.yaml is empty"),
    (["verify-resume", "--nproc", "0"], "--nproc 0: must be at least 1"),
    (["verify-resume", "--nproc", "2", "--device", "tpu"], "--device tpu: not a device"),
    (["verify-resume", "--strategy", "fsdp"], "argument --strategy: invalid choice: 'fsdp'"),
    # memory
    (["memory", "--params", "-5B"], "--params -5B: must be between 1 and 1000T"),
    (["memory", "--params", "1e30"], "--params 1e30: must be between 1 and 1000T"),
    (["memory", "--params", "0"], "--params 0: must be between 1 and 1000T"),
    (["memory", "--params", "7X"], "--params: unknown suffix 'X'"),
    (["memory", "--params", "7B", "--stage", "3"], "--stage 3 shards over several GPUs: give --shard N"),
    (["memory", "--params", "7B", "--shard", "0"], "--shard 0: must be at least 1"),
    (["memory", "--params", "7B", "--stage", "5"], "argument --stage: invalid choice: 5"),
    (["memory", "--params"], "argument --params: expected one argument"),
    # the dispatcher and the other commands
    (["nosuch"], "argument COMMAND: invalid choice: 'nosuch'"),
    (["check", "--format", "xml"], "argument --format: invalid choice: 'xml'"),
    (["rule", "TW999"], "unknown rule 'TW999'"),
]


def snapshot(root: Path) -> dict[str, str]:
    """Every file and folder under ``root`` with a hash of its bytes."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if "__pycache__" in rel:
            continue  # Python's own bytecode cache of the factories module
        out[rel] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
    return out


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    (tmp_path / "afile").write_text("not a folder\n")
    (tmp_path / "empty.yaml").write_text("")
    (tmp_path / "comments.yaml").write_text("# nothing but a comment\n")
    (tmp_path / "list.yaml").write_text("- model\n- data\n")
    (tmp_path / "factories.py").write_text(FACTORIES)
    (tmp_path / "emptyrun").mkdir()
    (tmp_path / "zero.yaml").write_text("batch_size: 0\n")
    (tmp_path / "negative-lr.yaml").write_text("optimizer: {name: SGD, lr: -1}\n")
    (tmp_path / "nodes.yaml").write_text("nnodes: 2\nnode_rank: 3\nrdzv_endpoint: head:29500\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, "factories", raising=False)
    return tmp_path


def call(argv):
    try:
        return main(argv)
    except SystemExit as stop:  # argparse's own exits (--help, --version)
        return stop.code


@pytest.mark.parametrize("argv,message", CASES, ids=lambda v: " ".join(v) if isinstance(v, list) else None)
def test_bad_input_is_one_line_exit_2_and_writes_nothing(workdir, capsys, argv, message):
    before = snapshot(workdir)
    code = call(argv)
    out, err = capsys.readouterr()
    assert code == 2, (code, err)
    assert err.startswith("trainwell: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err and out == ""
    assert message in err, err
    assert snapshot(workdir) == before


def test_debug_adds_the_traceback_and_keeps_the_line_and_the_code(workdir, capsys):
    assert call(["fit", "--batch-size", "0", "--debug"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("Traceback") and err.splitlines()[-1] == (
        "trainwell: error: --batch-size 0: must be at least 1")


def test_an_unexpected_exception_is_one_line_with_how_to_see_it(workdir, capsys, monkeypatch):
    import json

    from trainwell.memory import command

    monkeypatch.setattr(command, "run", json.loads)  # raises inside the standard library
    assert call(["memory", "--params", "1B"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("trainwell: error: internal error: TypeError: the JSON object must be")
    assert "rerun with --debug" in err


def test_a_launch_flag_inside_torchrun_is_one_line(workdir, capsys, monkeypatch):
    monkeypatch.setenv("TORCHELASTIC_RUN_ID", "job")  # a worker of a plain torchrun
    assert call(["fit", "--nnodes", "2", "--rdzv-endpoint", "head:29500", "--run-dir", "r"]) == 2
    assert "--nnodes given inside a torchrun process; drop --nnodes" in capsys.readouterr().err


def test_version_short_and_long(capsys):
    for flag in ("-V", "--version"):
        assert call([flag]) == 0
        assert capsys.readouterr().out == f"trainwell {__version__}\n"


def _run(argv, cwd, timeout=120):
    """A real process in its own session; the whole group is killed if it hangs."""
    proc = subprocess.Popen([sys.executable, "-m", "trainwell", *argv], cwd=cwd, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    return proc.returncode, out, err


def test_real_process_exit_status_and_one_line(workdir):
    code, out, err = _run(["fit", "--accumulate", "0"], workdir)
    assert code == 2 and out == ""
    assert err == "trainwell: error: --accumulate 0: must be at least 1\n"


def test_nproc_prints_one_summary_of_the_first_failing_rank(workdir):
    before = snapshot(workdir)
    code, out, err = _run(["fit", "--nproc", "2", "--model", "./factories.py:broken",
                           "--data", "./factories.py:make_data", "--run-dir", "run"], workdir)
    assert code == 2, err
    assert err.count("trainwell: error:") == 1 and err.count("\n") == 1, err
    assert "factories.py:broken" in err and "has no attribute 'broken'" in err
    assert "Traceback" not in err and "ChildFailedError" not in err and "[rank" not in err
    assert snapshot(workdir) == before


@pytest.mark.parametrize("argv, message", [
    (["run", "-m", "nosuchmod"], "no module named 'nosuchmod' from "),
    (["run", "-m", "nosuch.sub"], "no module named 'nosuch.sub' from "),
    (["run", "-m", "apkg"], "'apkg' is a package without a __main__ module"),
    (["run", "binary.py"], "binary.py: not a Python source file (source code string cannot contain null bytes)"),
])
def test_run_of_what_python_cannot_start_is_one_line_exit_1(workdir, capsys, argv, message):
    (workdir / "binary.py").write_bytes(b"\x00\x01\xfe\xff")
    (workdir / "apkg").mkdir()
    (workdir / "apkg" / "__init__.py").write_text("")
    code = call(argv)
    err = capsys.readouterr().err
    assert code == 1 and err.startswith("trainwell: error: ") and err.count("\n") == 1 and message in err, err
    assert "None" not in err and "Traceback" not in err
