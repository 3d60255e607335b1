"""A run directory belongs to one run: reuse is refused, --overwrite replaces, a failed resume
or start changes nothing on disk, a finished run resumed says so. Python API and CLI."""

import csv
import os
import signal
import subprocess
import sys
import time
import uuid
import warnings

import pytest
import torch
import yaml
from torch import nn

from trainwell.cli import main
from trainwell.errors import TrainwellError
from trainwell.fit import checkpoint as ckpt
from trainwell.fit.trainer import FinishedRunWarning, Trainer

from tiny import C, D, make_data, make_model


def make_trainer(model, run_dir, **kw):
    args = dict(loss=nn.CrossEntropyLoss(), max_epochs=2, batch_size=6, accumulate=2,
                progress=False, device="cpu", run_dir=run_dir, log_every=2)
    args.update(kw)
    return Trainer(model, lambda p: torch.optim.AdamW(p, lr=1e-2), **args)


def snapshot(folder):
    """Every file under ``folder`` with its bytes (and the folders, empty ones too)."""
    if not folder.exists():
        return None
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None)
            for p in sorted(folder.rglob("*"))}


def epochs_in(run_dir):
    return [int(r["epoch"]) for r in csv.DictReader(open(run_dir / "metrics.csv"))]


def one_line(error):
    message = str(error.value)
    assert "\n" not in message, message
    return message


# ----------------------------------------------------------------- Python API
def test_a_second_run_in_a_used_run_dir_is_refused_and_changes_nothing(tmp_path):
    make_trainer(make_model(), tmp_path).fit(make_data())
    before = snapshot(tmp_path)
    with pytest.raises(TrainwellError) as error:
        make_trainer(make_model(seed=2), tmp_path).fit(make_data())
    message = one_line(error)
    assert f"run_dir={str(tmp_path)!r} already holds a run (checkpoints/" in message
    assert f"resume={str(tmp_path)!r}" in message and "overwrite=True" in message
    assert "--" not in message  # the Python API speaks in arguments, not flags
    assert snapshot(tmp_path) == before


def test_overwrite_removes_every_file_of_the_old_run_first(tmp_path):
    make_trainer(make_model(), tmp_path, max_epochs=3, checkpoint_every=1,
                 keep_last=None).fit(make_data())
    old = snapshot(tmp_path)
    result = make_trainer(make_model(seed=2), tmp_path, max_epochs=1,
                          overwrite=True).fit(make_data())
    now = snapshot(tmp_path)
    assert sorted(now) == ["checkpoints", "checkpoints/best.ckpt",
                           "checkpoints/step-00000005.ckpt", "metrics.csv", "steps.csv"]
    assert all(now[name] != old[name] for name in now if now[name] is not None)
    assert epochs_in(tmp_path) == [1] and result.state.step == 5


def test_a_folder_with_other_files_is_never_emptied(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    for overwrite in (False, True):
        with pytest.raises(TrainwellError, match=r"is not empty: it holds files that trainwell did "
                                                 r"not write and will not delete \(notes.txt\)"):
            make_trainer(make_model(), tmp_path, overwrite=overwrite).fit(make_data())
    assert snapshot(tmp_path) == {"notes.txt": b"mine"}


def test_a_failed_resume_changes_no_byte(tmp_path):
    make_trainer(make_model(), tmp_path).fit(make_data())
    before = snapshot(tmp_path)
    other = nn.Sequential(nn.Linear(D, 7), nn.ReLU(), nn.Linear(7, C))
    with pytest.raises(TrainwellError, match="does not fit this model"):
        make_trainer(other, tmp_path, max_epochs=4).fit(make_data(), resume=tmp_path)
    with pytest.raises(TrainwellError, match="would delete the run that resume="):
        make_trainer(make_model(), tmp_path, max_epochs=4, overwrite=True).fit(
            make_data(), resume=tmp_path)
    assert snapshot(tmp_path) == before


def _broken_model():
    model = make_model()

    def fail(module, inputs):
        raise RuntimeError("the user's forward failed")

    model.register_forward_pre_hook(fail)
    return model


def test_a_run_that_fails_before_its_first_checkpoint_leaves_nothing(tmp_path):
    run_dir = tmp_path / "runs" / "a"
    with pytest.raises(RuntimeError, match="the user's forward failed"):
        make_trainer(_broken_model(), run_dir).fit(make_data())
    assert list(tmp_path.iterdir()) == []  # not even the runs/ folder it made
    empty = tmp_path / "empty"  # a folder the user made stays, empty
    empty.mkdir()
    with pytest.raises(RuntimeError):
        make_trainer(_broken_model(), empty).fit(make_data())
    assert snapshot(empty) == {}


def test_resuming_a_finished_run_says_so_and_writes_nothing(tmp_path):
    done = make_trainer(make_model(), tmp_path).fit(make_data())
    before = snapshot(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        again = make_trainer(make_model(), tmp_path).fit(make_data(), resume=tmp_path)
    [warning] = [w for w in caught if w.category is FinishedRunWarning]
    assert "already finished (step 10, after epoch 2; max_epochs=2)" in str(warning.message)
    assert "pass max_epochs=3 or more" in str(warning.message)
    assert again.already_finished and again.history == done.history
    assert snapshot(tmp_path) == before
    longer = make_trainer(make_model(), tmp_path, max_epochs=3).fit(make_data(), resume=tmp_path)
    assert not longer.already_finished and epochs_in(tmp_path) == [1, 2, 3]


def test_resuming_an_older_checkpoint_cuts_the_csv_files_back_to_it(tmp_path):
    make_trainer(make_model(), tmp_path, max_epochs=3, keep_last=None).fit(make_data())
    epoch_1 = tmp_path / "checkpoints" / "step-00000005.ckpt"
    make_trainer(make_model(), tmp_path, max_epochs=3).fit(make_data(), resume=epoch_1)
    assert epochs_in(tmp_path) == [1, 2, 3]  # each epoch once, the later ones retrained
    steps = [float(r["step"]) for r in csv.DictReader(open(tmp_path / "steps.csv"))]
    assert steps == [2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0]  # log_every=2, each once


def test_a_new_run_from_another_runs_checkpoint_starts_its_own_directory(tmp_path):
    make_trainer(make_model(), tmp_path / "a").fit(make_data())
    source = ckpt.step_files(tmp_path / "a" / "checkpoints")[-1]
    make_trainer(make_model(), tmp_path / "b", max_epochs=3).fit(make_data(), resume=source)
    assert epochs_in(tmp_path / "b") == [1, 2, 3]  # the history it continued, written once
    with pytest.raises(TrainwellError, match="already holds a run"):  # b is a run now
        make_trainer(make_model(), tmp_path / "b", max_epochs=4).fit(make_data(), resume=source)


# ------------------------------------------------------------------------ CLI
FACTORIES = """
import os, time
import torch
from torch import nn

def make_model():
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))

def other_model():
    return nn.Sequential(nn.Linear(4, 5), nn.ReLU(), nn.Linear(5, 3))

def make_data():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 4, generator=g)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 0).long()
    return (x[:48], y[:48]), (x[48:], y[48:])

def wide_data():  # 5 features for a model that takes 4
    (x, y), (vx, vy) = make_data()
    return (torch.cat([x, x[:, :1]], 1), y), None

class SlowToPlace(nn.Linear):
    def _apply(self, fn, recurse=True):  # model.to(device), in the Trainer's constructor
        open(os.environ["TW_READY"], "w").close()
        time.sleep(30)
        return super()._apply(fn, recurse)

def slow_model():  # SIGTERM arrives while the Trainer is built: the middle of start-up
    return SlowToPlace(4, 3)
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    name = f"tw_rundir_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(FACTORIES)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))

    def write(file="run.yaml", **keys):
        config = {"model": f"{name}:make_model", "data": f"{name}:make_data", "max_epochs": 2,
                  "batch_size": 16, "progress": False, "curves": False, **keys}
        (tmp_path / file).write_text(yaml.safe_dump(config))
        return file

    write.module = name
    return write


def fails_in_one_line(capsys, argv, code=2):
    assert main(argv) == code
    err = capsys.readouterr().err
    assert err.startswith("trainwell: error: ") and err.count("\n") == 1, err
    return err


def test_cli_refuses_a_used_run_dir_and_overwrite_replaces_it(project, tmp_path, capsys):
    assert main(["fit", "--config", project(), "--run-dir", "out"]) == 0
    before = snapshot(tmp_path / "out")
    err = fails_in_one_line(capsys, ["fit", "--config", project(), "--run-dir", "out"])
    assert "--run-dir out already holds a run (checkpoints/, config.yaml, metrics.csv" in err
    assert "pass --resume out to continue it, --overwrite to replace it" in err
    assert snapshot(tmp_path / "out") == before
    assert main(["fit", "--config", project(max_epochs=1), "--run-dir", "out", "--overwrite"]) == 0
    assert epochs_in(tmp_path / "out") == [1]
    assert [f.name for f in ckpt.step_files(tmp_path / "out" / "checkpoints")] == ["step-00000003.ckpt"]
    assert yaml.safe_load((tmp_path / "out" / "config.yaml").read_text())["max_epochs"] == 1


def test_cli_failed_resume_keeps_config_yaml_and_every_byte(project, tmp_path, capsys):
    assert main(["fit", "--config", project(), "--run-dir", "out"]) == 0
    before = snapshot(tmp_path / "out")
    err = fails_in_one_line(capsys, ["fit", "--resume", "out", "--max-epochs", "3", "--model",
                                     f"{project.module}:other_model"], code=1)
    assert "does not fit this model" in err
    assert snapshot(tmp_path / "out") == before  # config.yaml still names make_model
    assert main(["fit", "--resume", "out", "--max-epochs", "3"]) == 0  # so this still works
    assert epochs_in(tmp_path / "out") == [1, 2, 3]


def test_cli_resuming_a_finished_run_says_how_to_extend_it(project, tmp_path, capsys):
    assert main(["fit", "--config", project(max_steps=4), "--run-dir", "out"]) == 0
    before = snapshot(tmp_path / "out")
    capsys.readouterr()
    # run.yaml does not set max_steps: the saved one applies, and the message says whence
    assert main(["fit", "--config", project("other.yaml"), "--resume", "out"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1, captured
    assert ("out already finished (step 4, in epoch 2 (batch 1)): max_steps is 4 "
            f"({os.path.join('out', 'config.yaml')}: max_steps)") in captured.err
    assert "resume with a larger --max-steps (or --max-steps none)" in captured.err
    assert snapshot(tmp_path / "out") == before


def test_cli_finished_advice_counts_from_the_run_epoch(project, tmp_path, capsys):
    assert main(["fit", "--config", project(max_epochs=4), "--run-dir", "out"]) == 0
    capsys.readouterr()
    assert main(["fit", "--resume", "out", "--max-epochs", "2"]) == 0
    err = capsys.readouterr().err
    assert err == ("trainwell: out already finished (step 12, after epoch 4): max_epochs is 2 "
                   "(--max-epochs); nothing was trained or written; to train on, resume with "
                   "--max-epochs 5 or more\n")


def test_cli_resuming_an_early_stopped_run_says_it_stopped_early(project, tmp_path, capsys):
    # mode max on a falling val_loss: no epoch after the first improves, patience 1 ends it.
    config = project(max_epochs=10, monitor="val_loss", mode="max", early_stopping_patience=1)
    assert main(["fit", "--config", config, "--run-dir", "out"]) == 0
    assert "trainwell: early stopping after epoch 2: val_loss did not improve for 1 epoch" in (
        capsys.readouterr().err)
    assert main(["fit", "--resume", "out"]) == 0
    assert capsys.readouterr().err == (
        "trainwell: out stopped early (step 6, after epoch 2): val_loss did not improve for 1 "
        f"epoch and early_stopping_patience is 1 ({os.path.join('out', 'config.yaml')}: "
        "early_stopping_patience); nothing was trained or written; to train on, resume with "
        "--early-stopping-patience 2 or more (or --early-stopping-patience none)\n")


def test_cli_resumes_a_run_of_2_fsdp_processes_in_one_with_the_exact_batch(project, tmp_path, capsys):
    """A checkpoint of 2 x 8 (saved config: --strategy fsdp, --batch-size 8) resumed in 1 process."""
    assert main(["fit", "--config", project(batch_size=16, max_epochs=1), "--run-dir", "out"]) == 0
    saved = yaml.safe_load((tmp_path / "out" / "config.yaml").read_text())
    saved.update(strategy="fsdp", batch_size=8)  # what 2 processes of 8 write (global batch 16)
    (tmp_path / "out" / "config.yaml").write_text(yaml.safe_dump(saved))
    capsys.readouterr()
    assert main(["fit", "--resume", "out", "--max-epochs", "2"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("trainwell: the run was saved with --strategy fsdp; resuming it in 1 "
                          "process (pass --nproc N to train in N again)\n")
    assert ("the run will not continue exactly; its global batch is 16 (batch_size x processes): "
            "pass --batch-size 16 to continue exactly in 1 process") in err
    assert epochs_in(tmp_path / "out") == [1, 2]


def test_cli_failed_start_leaves_no_run_directory(project, tmp_path, capsys):
    """The model does not fit the data: the first forward fails, before any checkpoint."""
    assert main(["fit", "--config", project(), "--data", f"{project.module}:wide_data"]) != 0
    assert "Traceback" not in capsys.readouterr().err
    assert not (tmp_path / "trainwell-runs").exists()


def test_sigterm_during_start_up_leaves_nothing(project, tmp_path):
    ready = tmp_path / "ready"
    env = dict(os.environ, TW_READY=str(ready), OMP_NUM_THREADS="1")
    proc = subprocess.Popen([sys.executable, "-m", "trainwell", "fit", "--config",
                             project(model=f"{project.module}:slow_model")],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not ready.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert ready.exists(), proc.communicate(timeout=5)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode != 0
    assert not (tmp_path / "trainwell-runs").exists()
