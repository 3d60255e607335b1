"""verify_resume and `trainwell verify-resume`: exact resumes pass, hidden state is named."""

import pytest
import torch
from torch import nn

from trainwell.cli import main
from trainwell.errors import TrainwellError
from trainwell.fit.trainer import Trainer
from trainwell.fit.verify import verify_resume

D, C = 5, 3


def data():
    g = torch.Generator().manual_seed(0)
    return torch.randn(48, D, generator=g), torch.randint(0, C, (48,), generator=g)


class Drifting(nn.Module):
    """Keeps a call counter outside its state_dict: a resume loses it."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(D, C)
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return self.lin(x) * (1 + 0.01 * self.calls)


def factory(make_model):
    def make_trainer():
        torch.manual_seed(0)
        return Trainer(make_model(), lambda p: torch.optim.AdamW(p, lr=1e-2),
                       loss=nn.CrossEntropyLoss(), max_epochs=5, batch_size=8, accumulate=2,
                       scheduler=lambda o: torch.optim.lr_scheduler.StepLR(o, 1, 0.8),
                       progress=False, device="cpu")
    return make_trainer


def test_an_exact_setup_passes_and_compares_model_and_optimizer(tmp_path):
    model = lambda: nn.Sequential(nn.Linear(D, 8), nn.Dropout(0.2), nn.Linear(8, C))  # noqa: E731
    report = verify_resume(factory(model), data(), steps=10, stop_at=4, workdir=tmp_path)
    assert report.ok and report.steps == 10 and report.stop_at == 4
    assert report.compared == 4 + 4 * 3  # 4 weights; step, exp_avg, exp_avg_sq for each
    assert "resume is exact" in report.summary()
    assert (tmp_path / "resumed" / "checkpoints").is_dir()


def test_hidden_state_is_found_and_the_first_tensor_named(tmp_path):
    report = verify_resume(factory(Drifting), data(), steps=10, stop_at=4)
    assert not report.ok
    assert report.first_difference.name == "model.lin.weight"
    assert report.first_difference.max_abs_diff > 0
    assert "first difference in model.lin.weight: max abs diff" in report.summary()


def test_stop_at_must_be_inside_the_run():
    with pytest.raises(TrainwellError, match="stop_at=10: must be between 1 and 9"):
        verify_resume(factory(Drifting), data(), steps=10, stop_at=10)


def test_command_on_the_bundled_default(capsys):
    assert main(["verify-resume", "--steps", "12", "--stop-at", "5"]) == 0
    assert "resume is exact: 12 steps straight vs 5 + 7 resumed" in capsys.readouterr().out


def test_command_with_factories_reports_a_difference(tmp_path, capsys, monkeypatch):
    (tmp_path / "mine.py").write_text(
        "import torch\nfrom torch import nn\n"
        "class M(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__(); self.lin = nn.Linear(5, 3); self.calls = 0\n"
        "    def forward(self, x):\n"
        "        self.calls += 1\n"
        "        return self.lin(x) * (1 + 0.01 * self.calls)\n"
        "def model():\n    return M()\n"
        "def data():\n"
        "    g = torch.Generator().manual_seed(0)\n"
        "    return (torch.randn(40, 5, generator=g), torch.randint(0, 3, (40,), generator=g)), None\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    code = main(["verify-resume", "--model", "mine:model", "--data", "mine:data", "--steps", "8"])
    assert code == 1
    assert "resume is NOT exact" in capsys.readouterr().out
    assert main(["verify-resume", "--model", "mine:model"]) == 2
    assert "'data' is missing" in capsys.readouterr().err


def test_command_runs_the_configs_length_and_refuses_a_longer_one(tmp_path, capsys, monkeypatch):
    (tmp_path / "tw_verify_len.py").write_text(
        "import torch\nfrom torch import nn\n"
        "def model():\n    return nn.Linear(5, 3)\n"
        "def data():\n"
        "    g = torch.Generator().manual_seed(0)\n"
        "    return (torch.randn(40, 5, generator=g), torch.randint(0, 3, (40,), generator=g)), None\n")
    (tmp_path / "run.yaml").write_text("model: tw_verify_len:model\ndata: tw_verify_len:data\n"
                                       "max_epochs: 3\nbatch_size: 8\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["verify-resume", "--config", "run.yaml"]) == 0  # 5 batches x 3 epochs
    assert "resume is exact: 15 steps straight vs 8 + 7 resumed" in capsys.readouterr().out
    assert main(["verify-resume", "--config", "run.yaml", "--steps", "60"]) == 2
    assert capsys.readouterr().err == (
        "trainwell: error: --steps 60: the run is only 15 optimizer steps long (max_epochs 3); "
        "pass --steps 15 or less, or raise max_epochs\n")


def test_command_in_two_processes_finds_the_hidden_state_and_reports_once(tmp_path):
    """--nproc 2: DDP runs stopped and resumed in one work folder; rank 0 alone prints."""
    import os
    import signal
    import subprocess
    import sys

    (tmp_path / "tw_drift.py").write_text(
        "import torch\nfrom torch import nn\n"
        "class M(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__(); self.lin = nn.Linear(5, 3); self.calls = 0\n"
        "    def forward(self, x):\n"
        "        self.calls += 1\n"
        "        return self.lin(x) * (1 + 0.01 * self.calls)\n"
        "def model():\n    return M()\n"
        "def data():\n"
        "    g = torch.Generator().manual_seed(0)\n"
        "    return (torch.randn(64, 5, generator=g), torch.randint(0, 3, (64,), generator=g)), None\n")
    argv = [sys.executable, "-m", "trainwell", "verify-resume", "--model", "tw_drift:model",
            "--data", "tw_drift:data", "--nproc", "2"]
    proc = subprocess.Popen(argv, cwd=tmp_path, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=180)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    assert proc.returncode == 1, err
    assert out.count("resume is NOT exact") == 1, out  # 64 samples / 2 ranks / 64 per batch
    assert "10 steps straight vs 6 + 4 resumed" in out and "model.lin.weight" in out
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "__pycache__") == ["tw_drift.py"]
