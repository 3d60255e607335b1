"""TensorBoard and MLflow loggers: opt-in, and tested by reading back what they wrote."""

import pytest
import torch
from torch import nn

from trainwell import Trainer
from trainwell.errors import TrainwellError
from trainwell.fit import loggers
from trainwell.fit.curves import read_csv


def tiny_fit(run_dir, callbacks, epochs=2):
    torch.manual_seed(0)
    x, y = torch.randn(64, 4), torch.randint(0, 3, (64,))
    trainer = Trainer(nn.Linear(4, 3), lambda p: torch.optim.SGD(p, lr=0.1),
                      loss=nn.CrossEntropyLoss(), metrics=["accuracy"], max_epochs=epochs,
                      batch_size=16, log_every=2, progress=False, run_dir=run_dir,
                      callbacks=callbacks)
    return trainer.fit((x[:48], y[:48]), (x[48:], y[48:]))


def test_tensorboard_events_hold_the_logged_values(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    tiny_fit(tmp_path, [loggers.TensorBoardLogger()])
    events = EventAccumulator(str(tmp_path / "tensorboard"))
    events.Reload()
    steps = read_csv(tmp_path / "steps.csv")
    epochs = read_csv(tmp_path / "metrics.csv")
    logged = events.Scalars("train/train_loss")
    assert [e.step for e in logged] == [int(r["step"]) for r in steps] == [2, 4, 6]
    assert [e.value for e in logged] == pytest.approx([r["train_loss"] for r in steps], rel=1e-6)
    assert [e.value for e in events.Scalars("train/lr")] == pytest.approx([0.1] * 3)
    val = events.Scalars("epoch/val_accuracy")
    assert [e.step for e in val] == [3, 6]
    assert [e.value for e in val] == pytest.approx([r["val_accuracy"] for r in epochs], rel=1e-6)
    assert "epoch/val_loss" in events.Tags()["scalars"]


def test_without_a_run_directory_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    logger = loggers.TensorBoardLogger()
    tiny_fit(None, [logger], epochs=1)
    assert logger.writer is None and list(tmp_path.iterdir()) == []


def test_loggers_are_opt_in_and_asking_for_a_missing_one_is_an_error(monkeypatch):
    assert loggers.make_loggers([]) == []  # installed (the test extras) is not asked for
    made = loggers.make_loggers(["tensorboard", "mlflow"])
    assert [type(c) for c in made] == [loggers.TensorBoardLogger, loggers.MLflowLogger]
    with pytest.raises(TrainwellError, match="logger 'wandb' is not known; use tensorboard or mlflow"):
        loggers.make_loggers(["wandb"])
    monkeypatch.setattr(loggers, "installed", lambda name: name == "tensorboard")
    with pytest.raises(TrainwellError, match="logger 'mlflow' is asked for but mlflow is not "
                                             "installed; pip install mlflow"):
        loggers.make_loggers(["mlflow"])


def test_the_cli_writes_a_logger_only_when_asked_and_lists_what_it_wrote(tmp_path, capsys):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from trainwell.cli import main

    base = ["fit", "--max-epochs", "1", "--no-progress", "--no-curves"]  # the bundled default
    assert main([*base, "--run-dir", str(tmp_path / "plain")]) == 0
    out = capsys.readouterr().out
    assert (f"run directory: {tmp_path / 'plain'} (checkpoints/, config.yaml, metrics.csv, "
            "steps.csv)\n") in out
    assert main([*base, "--run-dir", str(tmp_path / "tb"), "--logger", "tensorboard"]) == 0
    out = capsys.readouterr().out
    assert "(checkpoints/, config.yaml, metrics.csv, steps.csv, tensorboard/)\n" in out
    events = EventAccumulator(str(tmp_path / "tb" / "tensorboard"))
    events.Reload()
    [record] = read_csv(tmp_path / "tb" / "metrics.csv")
    [logged] = events.Scalars("epoch/val_loss")
    assert logged.step == record["step"] and logged.value == pytest.approx(record["val_loss"])


def test_loggers_in_the_config_are_checked_by_name():
    from trainwell.fit import config as cfg

    assert cfg.build({"loggers": ["mlflow", "tensorboard"]}).loggers == ["mlflow", "tensorboard"]
    assert cfg.build({"loggers": "tensorboard"}).loggers == ["tensorboard"]
    assert cfg.build({}).loggers == []
    with pytest.raises(TrainwellError, match="run.yaml: loggers: expected a list of tensorboard, "
                                             "mlflow"):
        cfg.build({"loggers": ["tensorbord"]}, "run.yaml")


def test_mlflow_local_store_holds_params_and_metrics(tmp_path):
    mlflow = pytest.importorskip("mlflow")
    tiny_fit(tmp_path, [loggers.MLflowLogger({"optimizer": {"name": "SGD", "lr": 0.1}})])
    client = mlflow.tracking.MlflowClient(loggers.MLflowLogger.tracking_uri(tmp_path))
    [experiment] = [e for e in client.search_experiments() if e.name == "trainwell"]
    [run] = client.search_runs([experiment.experiment_id])
    assert run.data.params["optimizer.name"] == "SGD"
    history = client.get_metric_history(run.info.run_id, "epoch_val_accuracy")
    epochs = read_csv(tmp_path / "metrics.csv")
    assert [m.value for m in history] == pytest.approx([r["val_accuracy"] for r in epochs])
