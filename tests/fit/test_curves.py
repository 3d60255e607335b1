"""The training-curves PNG, from CSV logs or from records in memory."""

import torch
from matplotlib.image import imread
from torch import nn

from trainwell import Trainer
from trainwell.fit.curves import CurvesPlot, plot_curves, plot_run, read_csv

STEPS = [{"step": s, "epoch": 1 + s // 4, "train_loss": 1 / s, "lr": 0.1 / s} for s in range(1, 9)]
EPOCHS = [{"epoch": 1, "step": 4, "train_loss": 0.5, "val_loss": 0.6, "val_acc": 0.7, "lr": 0.02},
          {"epoch": 2, "step": 8, "train_loss": 0.2, "val_loss": 0.4, "val_acc": 0.8, "lr": 0.01}]


def test_one_panel_per_quantity(tmp_path):
    with_metric = imread(plot_curves(STEPS, EPOCHS, tmp_path / "a.png"))
    no_metric = imread(plot_curves(STEPS, [{k: v for k, v in r.items() if k != "val_acc"}
                                           for r in EPOCHS], tmp_path / "b.png"))
    assert with_metric.shape[1] * 2 == no_metric.shape[1] * 3  # loss, metrics, lr vs loss, lr
    assert with_metric.std() > 0  # something was drawn


def test_csv_logs_are_read_back_as_numbers(tmp_path):
    (tmp_path / "metrics.csv").write_text("epoch,step,val_loss,val_acc\n1,4,0.6,0.7\n2,8,0.4,\n")
    assert read_csv(tmp_path / "metrics.csv") == [
        {"epoch": 1.0, "step": 4.0, "val_loss": 0.6, "val_acc": 0.7},
        {"epoch": 2.0, "step": 8.0, "val_loss": 0.4}]
    assert read_csv(tmp_path / "absent.csv") == []
    assert plot_run(tmp_path).name == "curves.png" and (tmp_path / "curves.png").is_file()


def test_callback_draws_the_run_at_the_end(tmp_path):
    x, y = torch.randn(32, 4), torch.randint(0, 2, (32,))
    plot = CurvesPlot()
    Trainer(nn.Linear(4, 2), lambda p: torch.optim.SGD(p, lr=0.1), loss=nn.CrossEntropyLoss(),
            max_epochs=2, batch_size=8, log_every=1, progress=False, run_dir=tmp_path,
            callbacks=[plot]).fit((x, y), (x, y))
    assert plot.written == tmp_path / "curves.png"
    assert len(plot.steps) == 8 and imread(plot.written).ndim == 3


def test_callback_without_run_directory_draws_from_memory_only_when_given_a_path(tmp_path):
    x, y = torch.randn(16, 4), torch.randint(0, 2, (16,))

    def fit(plot):
        Trainer(nn.Linear(4, 2), lambda p: torch.optim.SGD(p, lr=0.1), loss=nn.CrossEntropyLoss(),
                max_epochs=1, batch_size=8, log_every=1, progress=False,
                callbacks=[plot]).fit((x, y), (x, y))
        return plot.written

    assert fit(CurvesPlot()) is None
    assert fit(CurvesPlot(tmp_path / "c.png")) == tmp_path / "c.png"
