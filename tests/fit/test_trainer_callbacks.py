"""CSV logs read back; the progress bar and its per-epoch table."""

import csv
import io

import torch
from torch import nn

from trainwell.fit.callbacks import Callback, CallbackList, ProgressBar
from trainwell.fit.trainer import Trainer


def fit(run_dir, **kw):
    torch.manual_seed(0)
    x, y = torch.randn(48, 3), torch.randint(0, 2, (48,))
    args = dict(loss=nn.CrossEntropyLoss(), max_epochs=3, batch_size=8, progress=False,
                device="cpu", run_dir=run_dir, log_every=4, metrics={"acc": "accuracy"})
    args.update(kw)
    return Trainer(nn.Linear(3, 2), lambda p: torch.optim.SGD(p, lr=0.1), **args).fit(
        (x, y), val_data=(x, y))


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_csv_logs_read_back(tmp_path):
    result = fit(tmp_path)
    metrics = read(tmp_path / "metrics.csv")
    assert [int(r["epoch"]) for r in metrics] == [1, 2, 3]
    for row, record in zip(metrics, result.history):
        assert float(row["val_acc"]) == record["val_acc"]
        assert float(row["train_loss"]) == record["train_loss"]
    steps = read(tmp_path / "steps.csv")  # 6 steps per epoch, a record every 4 steps
    assert [float(r["step"]) for r in steps] == [4, 8, 12, 16]
    assert set(steps[0]) == {"step", "epoch", "train_loss", "lr", "samples_per_s"}
    assert float(steps[1]["epoch"]) == 8 / 6 and float(steps[0]["samples_per_s"]) > 0


def test_resumed_run_appends_to_the_same_csv(tmp_path):
    fit(tmp_path, max_epochs=2)
    torch.manual_seed(0)
    x, y = torch.randn(48, 3), torch.randint(0, 2, (48,))
    Trainer(nn.Linear(3, 2), lambda p: torch.optim.SGD(p, lr=0.1), loss=nn.CrossEntropyLoss(),
            max_epochs=3, batch_size=8, progress=False, device="cpu", run_dir=tmp_path,
            log_every=4, metrics={"acc": "accuracy"}).fit((x, y), val_data=(x, y),
                                                            resume=tmp_path)
    assert [int(r["epoch"]) for r in read(tmp_path / "metrics.csv")] == [1, 2, 3]


def test_no_files_without_run_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = fit(None)
    assert result.run_dir is None and result.last_checkpoint is None
    assert list(tmp_path.iterdir()) == []


def test_progress_bar_counts_steps_and_prints_an_epoch_table():
    out = io.StringIO()
    bar = ProgressBar(total_steps=18, file=out, live=True)
    fit(None, callbacks=[bar])
    text = out.getvalue()
    assert bar.bar.n == 18
    header = next(line for line in text.splitlines() if "val_acc" in line)
    assert all(col in header for col in ("epoch", "train_loss", "val_loss", "val_acc", "lr"))
    assert "samples_s" in text


def test_only_overriding_callbacks_are_called_per_step():
    class OnlyEpoch(Callback):
        def on_epoch_end(self, trainer, state, record):
            pass

    hooks = CallbackList([OnlyEpoch()])
    assert hooks.on_step_end_targets == [] and len(hooks.on_epoch_end_targets) == 1
