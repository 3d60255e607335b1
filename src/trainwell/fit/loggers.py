"""Optional loggers: TensorBoard event files and an MLflow local store.

Each is a ``Callback`` that writes under the trainer's run directory and only
what the loop already read on the host (log and epoch records), so neither
adds a host sync. They are opt-in (``--logger tensorboard``, ``loggers: [mlflow]``):
being installed is no reason to run one (MLflow alone costs seconds at start and
a SQLite store); asking for one that is not installed is an error, not a no-op.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from trainwell.errors import TrainwellError
from trainwell.fit.callbacks import Callback

# record keys that are counters, not values to plot
_COUNTERS = ("step", "epoch")


def installed(package: str) -> bool:
    """Whether ``package`` can be imported (without importing it)."""
    return importlib.util.find_spec(package) is not None


class TensorBoardLogger(Callback):
    """Scalars in ``run_dir/tensorboard``: ``train/<key>`` every log interval,
    ``epoch/<key>`` every epoch, both at the optimizer step they belong to."""

    def __init__(self, log_dir: str | Path | None = None) -> None:
        self.log_dir = Path(log_dir) if log_dir is not None else None
        self.writer: Any = None

    def on_fit_start(self, trainer: Any, state: Any) -> None:
        log_dir = self.log_dir or (trainer.run_dir / "tensorboard" if trainer.run_dir else None)
        if log_dir is None:
            return  # no run directory: nothing is written
        from torch.utils.tensorboard import SummaryWriter

        self.writer = SummaryWriter(log_dir=str(log_dir))

    def on_log(self, trainer: Any, state: Any, record: dict[str, float]) -> None:
        self._write("train", record)

    def on_epoch_end(self, trainer: Any, state: Any, record: dict[str, Any]) -> None:
        self._write("epoch", record)
        if self.writer is not None:
            self.writer.flush()

    def on_fit_end(self, trainer: Any, result: Any) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    def _write(self, prefix: str, record: dict[str, Any]) -> None:
        if self.writer is None:
            return
        step = int(record["step"])
        for key, value in record.items():
            if key not in _COUNTERS and isinstance(value, (int, float)):
                self.writer.add_scalar(f"{prefix}/{key}", float(value), global_step=step)


class MLflowLogger(Callback):
    """Params and metrics in a local MLflow store, ``run_dir/mlflow.db`` (SQLite).

    MLflow 3 refuses new file stores (``mlruns/``) unless told otherwise, so
    the store is a SQLite file; a client object is used, not MLflow's global
    active run, so a user's own MLflow session is left alone.
    View with ``mlflow ui --backend-store-uri sqlite:///<run_dir>/mlflow.db``.
    """

    def __init__(self, params: dict[str, Any] | None = None, experiment: str = "trainwell") -> None:
        self.params = params or {}
        self.experiment = experiment
        self.client: Any = None
        self.run_id: str | None = None

    @staticmethod
    def tracking_uri(run_dir: str | Path) -> str:
        return f"sqlite:///{(Path(run_dir).resolve() / 'mlflow.db').as_posix()}"

    def on_fit_start(self, trainer: Any, state: Any) -> None:
        if trainer.run_dir is None:
            return
        from mlflow.entities import Param
        from mlflow.tracking import MlflowClient

        self.client = MlflowClient(tracking_uri=self.tracking_uri(trainer.run_dir))
        found = self.client.get_experiment_by_name(self.experiment)
        experiment_id = found.experiment_id if found else self.client.create_experiment(self.experiment)
        self.run_id = self.client.create_run(experiment_id, run_name=Path(trainer.run_dir).name).info.run_id
        if self.params:
            params = [Param(k, str(v)[:250]) for k, v in _flatten(self.params).items()]
            self.client.log_batch(self.run_id, params=params)

    def on_log(self, trainer: Any, state: Any, record: dict[str, float]) -> None:
        self._write("train_", record)

    def on_epoch_end(self, trainer: Any, state: Any, record: dict[str, Any]) -> None:
        self._write("epoch_", record)

    def on_fit_end(self, trainer: Any, result: Any) -> None:
        if self.run_id is not None:
            self.client.set_terminated(self.run_id)
            self.run_id = None

    def _write(self, prefix: str, record: dict[str, Any]) -> None:
        if self.run_id is None:
            return
        from mlflow.entities import Metric

        now, step = int(time.time() * 1000), int(record["step"])
        metrics = [Metric(prefix + k, float(v), now, step) for k, v in record.items()
                   if k not in _COUNTERS and isinstance(v, (int, float))]
        self.client.log_batch(self.run_id, metrics=metrics)


def make_loggers(names: Iterable[str], params: dict[str, Any] | None = None) -> list[Callback]:
    """The loggers asked for by name (``tensorboard``, ``mlflow``), each checked to be installed."""
    makers: dict[str, Callable[[], Callback]] = {
        "tensorboard": TensorBoardLogger, "mlflow": lambda: MLflowLogger(params)}
    loggers: list[Callback] = []
    for name in names:
        if name not in makers:
            raise TrainwellError(f"logger {name!r} is not known; use {' or '.join(makers)} "
                                 "(CSV files are always written)")
        if not installed(name):
            raise TrainwellError(f"logger {name!r} is asked for but {name} is not installed; "
                                 f"pip install {name} (or 'trainwell[loggers]')")
        loggers.append(makers[name]())
    return loggers


def _flatten(params: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in params.items():
        if isinstance(value, dict):
            out.update(_flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out
