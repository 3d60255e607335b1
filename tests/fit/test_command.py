"""`trainwell fit`: the bundled default (one real run) and user configs (tiny, in-process)."""

import csv
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import yaml

from trainwell.cli import main

FACTORIES = """
import torch
from torch import nn

def make_model():
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))

def make_data():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(96, 4, generator=g)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 0).long()
    return (x[:64], y[:64]), (x[64:], y[64:])

def make_loaders():
    (x, y), val = make_data()
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=10,
                                         shuffle=True)
    return loader, val

def not_a_pair():
    return torch.zeros(3)

class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))

    def forward(self, x):
        return self.body(x * 2)

def make_scaled():
    return Scaled()

def make_wide_data():
    (x, y), (xv, yv) = make_data()
    return (torch.cat([x, x[:, :1]], 1), y), (torch.cat([xv, xv[:, :1]], 1), yv)

not_callable = 3
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A folder with a factories module (unique name: modules stay cached) and a config writer."""
    name = f"tw_factories_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(FACTORIES)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))

    def write(**keys):
        config = {"model": f"{name}:make_model", "data": f"{name}:make_data", "max_epochs": 2,
                  "batch_size": 16, "metrics": ["accuracy"], "progress": False,
                  "curves": False, **keys}
        path = tmp_path / "run.yaml"
        path.write_text(yaml.safe_dump(config))
        return str(path)

    write.module = name
    write.root = tmp_path
    return write


def fails_with(capsys, argv, *fragments):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("trainwell: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err, err
    return err


def test_default_run_reaches_97_percent_and_writes_the_run_directory(tmp_path):
    """The product's main job, run once for real as a user runs it."""
    done = subprocess.run([sys.executable, "-m", "trainwell", "fit", "--no-progress"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    val_acc = float(re.search(r"val_acc (\d\.\d+)", done.stdout).group(1))
    assert val_acc >= 0.97, done.stdout
    run_dir = tmp_path / re.search(r"run directory: (\S+)", done.stdout).group(1)
    assert run_dir.parent == tmp_path / "trainwell-runs"
    # The README shows this run's listing: it must be what a base run really writes.
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    shown = re.search(r"run directory: trainwell-runs/<time> (\(.*\))", readme).group(1)
    assert re.search(r"run directory: \S+ (\(.*\))", done.stdout).group(1) == shown
    for name in ("metrics.csv", "steps.csv", "config.yaml", "curves.png", "checkpoints/best.ckpt"):
        assert (run_dir / name).is_file(), name
    rows = list(csv.DictReader(open(run_dir / "metrics.csv")))
    assert len(rows) == 30 and float(rows[-1]["val_acc"]) == pytest.approx(val_acc, abs=1e-4)


def test_user_config_trains_and_saves_its_effective_config(project, capsys):
    run_dir = project.root / "out"
    assert main(["fit", "--config", project(), "--run-dir", str(run_dir), "--curves"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"epoch 2, step 8: val_loss \d\.\d+  val_accuracy \d\.\d+", out), out
    assert f"run directory: {run_dir}" in out
    assert len(list(csv.DictReader(open(run_dir / "metrics.csv")))) == 2
    assert (run_dir / "curves.png").is_file() and not (run_dir / "tensorboard").exists()
    saved = yaml.safe_load((run_dir / "config.yaml").read_text())
    assert saved["max_epochs"] == 2 and saved["run_dir"] == str(run_dir)
    assert saved["optimizer"] == {"name": "AdamW", "lr": 1e-3}  # no bundled preset underneath
    assert (run_dir / "config.yaml").read_text().endswith("\n# ran: AdamW, fused step\n")


def test_flags_override_the_yaml(project, capsys):
    argv = ["fit", "--config", project(optimizer={"name": "SGD", "lr": 0.1, "momentum": 0.9}),
            "--max-epochs", "5", "--lr", "1e-2", "--clip-grad-norm", "1", "--no-progress",
            "--scheduler", "StepLR", "--scheduler-arg", "step_size=2", "--print-config"]
    assert main(argv) == 0
    shown = yaml.safe_load(capsys.readouterr().out)
    assert shown["max_epochs"] == 5 and shown["clip_grad_norm"] == 1.0
    assert shown["optimizer"] == {"name": "SGD", "lr": 0.01, "momentum": 0.9}
    assert shown["scheduler"] == {"name": "StepLR", "interval": "epoch", "step_size": 2}
    assert shown["model"] == f"{project.module}:make_model"


def test_schedule_length_is_filled_in_from_the_data(project, capsys):
    """OneCycleLR per step over DataLoaders: total_steps = batches x epochs, accumulation counted."""
    run_dir = project.root / "loaders"
    argv = ["fit", "--config", project(data=f"{project.module}:make_loaders"), "--run-dir",
            str(run_dir), "--accumulate", "2", "--scheduler", "OneCycleLR",
            "--scheduler-interval", "step", "--scheduler-arg", "max_lr=0.05"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "warning" not in captured.err  # the Trainer's horizon preflight agrees
    assert "epoch 2, step 8:" in captured.out  # 7 batches of 10 -> 4 steps per epoch
    # the same preflight does object to a horizon that does not match
    assert main(argv + ["--scheduler-arg", "total_steps=20", "--overwrite"]) == 0
    assert "trainwell: warning: OneCycleLR has total_steps=20" in capsys.readouterr().err


def test_resume_from_a_checkpoint_file(project, capsys):
    run_dir = project.root / "ck"
    assert main(["fit", "--config", project(), "--run-dir", str(run_dir)]) == 0
    checkpoint = sorted((run_dir / "checkpoints").glob("step-*.ckpt"))[0]
    capsys.readouterr()
    assert main(["fit", "--resume", str(checkpoint), "--no-progress"]) == 0
    assert f"run directory: {run_dir}" in capsys.readouterr().out
    assert [int(r["epoch"]) for r in csv.DictReader(open(run_dir / "metrics.csv"))][-1] == 2


def test_print_config_without_arguments_shows_the_bundled_default(capsys):
    assert main(["fit", "--print-config", "--max-epochs", "3"]) == 0
    shown = yaml.safe_load(capsys.readouterr().out)
    assert shown["model"] == "trainwell.fit.default:make_model" and shown["max_epochs"] == 3
    assert shown["scheduler"]["name"] == "OneCycleLR" and shown["metrics"] == {"acc": "accuracy"}


def test_resume_continues_the_run_in_its_directory(project, capsys):
    run_dir = project.root / "run"
    assert main(["fit", "--config", project(), "--run-dir", str(run_dir)]) == 0
    capsys.readouterr()
    assert main(["fit", "--resume", str(run_dir), "--max-epochs", "3"]) == 0
    out = capsys.readouterr().out
    assert "epoch 3, step 12:" in out and f"run directory: {run_dir}" in out
    epochs = [int(r["epoch"]) for r in csv.DictReader(open(run_dir / "metrics.csv"))]
    assert epochs == [1, 2, 3]


def test_bad_configs_are_one_line_errors_with_exit_code_2(project, capsys):
    fails_with(capsys, ["fit", "--config", project(max_epoch=3)],
               "unknown key 'max_epoch' (did you mean 'max_epochs'?)", "valid keys: model, data")
    fails_with(capsys, ["fit", "--config", project(batch_size="16")],
               "batch_size: expected int, got '16' (str)")
    fails_with(capsys, ["fit", "--config", project(), "--max-epochs", "two"],
               "--max-epochs two: expected an integer")
    fails_with(capsys, ["fit", "--config", project(model="missing_module_tw:make")],
               "model 'missing_module_tw:make': no module named 'missing_module_tw'")
    fails_with(capsys, ["fit", "--config", project(data=f"{project.module}:not_callable")],
               "is not callable")
    fails_with(capsys, ["fit", "--config", project(data=f"{project.module}:not_a_pair")],
               "must return (train, val)")
    fails_with(capsys, ["fit", "--config", project(optimizer={"name": "Adamm"})],
               "optimizer 'Adamm' is not in torch.optim", "valid choices: ")
    fails_with(capsys, ["fit", "--config", project(), "--model", "trainwell.fit.default:make_model",
                        "--data", "trainwell.fit.default:make_data", "--loss", "CrossEntropy"],
               "loss 'CrossEntropy' is not in torch.nn")
    fails_with(capsys, ["fit", "--model", f"{project.module}:make_model"], "'data' is missing")
    fails_with(capsys, ["fit", "--config", str(project.root / "absent.yaml")], "cannot read config")
    fails_with(capsys, ["fit", "--resume", str(project.root / "nowhere")], "no such file")
    assert not (project.root / "trainwell-runs").exists()  # nothing ran, no empty run left behind


def test_flag_text_stays_text_and_none_clears_an_option(capsys):
    argv = ["fit", "--print-config", "--run-dir", "2026", "--keep-last", "none",
            "--clip-grad-norm", "0.5", "--no-curves", "--metric", "accuracy", "--scheduler", "none"]
    assert main(argv) == 0
    shown = yaml.safe_load(capsys.readouterr().out)
    assert shown["run_dir"] == "2026" and shown["keep_last"] is None
    assert shown["clip_grad_norm"] == 0.5 and shown["curves"] is False
    assert shown["metrics"] == {"accuracy": "accuracy"} and shown["scheduler"] is None


def test_command_module_and_print_config_do_not_import_torch():
    code = ("import sys; from trainwell.cli import main; main(['fit', '--print-config']); "
            "assert 'torch' not in sys.modules, 'torch imported'")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "model: trainwell.fit.default:make_model" in done.stdout


def test_factories_by_file_path_train(project, capsys):
    path = f"./{project.module}.py"
    argv = ["fit", "--model", f"{path}:make_model", "--data", f"{path}:make_data",
            "--max-epochs", "1", "--no-progress", "--no-curves", "--run-dir", "by-path"]
    assert main(argv) == 0
    assert "epoch 1, step 1:" in capsys.readouterr().out


def test_an_error_in_the_users_model_shows_their_frame_and_the_shapes(project, capsys):
    argv = ["fit", "--config", project(model=f"{project.module}:make_scaled",
                                       data=f"{project.module}:make_wide_data")]
    assert main(argv) == 1
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == ("trainwell: error: the model's forward raised RuntimeError: mat1 and mat2 "
                        "shapes cannot be multiplied (16x5 and 4x8)")
    assert lines[1] == f"  {project.module}.py:29 in forward: return self.body(x * 2)"
    assert lines[2] == "  the model's input: (16, 5) float32"
    assert lines[3].startswith("  its first layer 'body.0' (Linear) expects in_features=4")
    assert len(lines) == 5 and "--debug" in lines[4]  # no frame of trainwell or torch
    assert not (project.root / "trainwell-runs").exists()


def test_trainer_messages_reach_the_command_line_as_flags(project, capsys):
    assert main(["fit", "--config", project(), "--monitor", "val_f1"]) == 2
    err = capsys.readouterr().err
    assert "--monitor val_f1 is not in the epoch records" in err and "monitor=" not in err
