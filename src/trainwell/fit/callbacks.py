"""Callbacks: hooks into the loop, called only where a callback overrides them.

``on_step_end`` runs after every optimizer step and must not read tensor
values (no host sync); values arrive, already on the host, in ``on_log``
(every ``log_every`` steps) and ``on_epoch_end``.
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path
from typing import Any

HOOKS = ("on_fit_start", "on_step_end", "on_log", "on_epoch_end", "on_fit_end")


class Callback:
    """Base class; every method is an optional no-op."""

    def on_fit_start(self, trainer: Any, state: Any) -> None:
        """Before the first step (``trainer.run_dir`` is already set)."""

    def on_step_end(self, trainer: Any, state: Any) -> None:
        """After every optimizer step. No host sync allowed here."""

    def on_log(self, trainer: Any, state: Any, record: dict[str, float]) -> None:
        """Every ``log_every`` steps: step, epoch, train_loss, lr, samples_per_s."""

    def on_epoch_end(self, trainer: Any, state: Any, record: dict[str, Any]) -> None:
        """After each epoch (and its validation) with the epoch record."""

    def on_fit_end(self, trainer: Any, result: Any) -> None:
        """After training, with the FitResult."""


class CallbackList:
    """Dispatches each hook to the callbacks that override it, and only those."""

    def __init__(self, callbacks: list[Callback]) -> None:
        from trainwell.errors import TrainwellError

        for cb in callbacks:
            if not any(callable(getattr(cb, h, None)) for h in HOOKS):
                raise TrainwellError(
                    f"callback {cb!r} has none of the hooks {', '.join(HOOKS)}; "
                    "subclass trainwell.fit.callbacks.Callback"
                )
        self.callbacks = list(callbacks)
        for hook in HOOKS:
            base = getattr(Callback, hook)
            setattr(self, hook + "_targets", [
                getattr(cb, hook) for cb in callbacks
                if callable(getattr(cb, hook, None))
                and getattr(type(cb), hook, None) is not base
            ])

    def fire(self, hook: str, *args: Any) -> None:
        for fn in getattr(self, hook + "_targets"):
            fn(*args)


def _append_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    """Append rows to a CSV file, writing the header when the file is new."""
    new = not path.exists() or path.stat().st_size == 0
    fields = list(rows[0])
    if not new:
        with open(path, newline="") as f:
            fields = next(csv.reader(f), fields)
    with open(path, "a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        if new:
            writer.writeheader()
        writer.writerows(rows)


def _replace_rows(path: Path, fields: list[str], rows: list[dict[str, Any]]) -> None:
    """Write ``rows`` as the whole file, atomically (none: no file)."""
    if not rows:
        path.unlink(missing_ok=True)
        return
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=fields, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(text.getvalue())
    os.replace(tmp, path)


def _rows_before(path: Path, step: int) -> tuple[list[str], list[dict[str, Any]]]:
    """The header and the rows of ``path`` logged at or before optimizer step ``step``."""
    if not path.exists():
        return [], []
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        return list(reader.fieldnames or []), [r for r in reader if float(r["step"]) <= step]


class CSVLogger(Callback):
    """``run_dir/steps.csv`` (log records) and ``run_dir/metrics.csv`` (epoch records).

    A resumed run continues the same files, first cut back to the checkpoint it
    resumed from (a run killed after a checkpoint may have logged beyond it):
    metrics.csv becomes the checkpoint's epoch history, steps.csv loses later
    rows. So each step and epoch appears once, also in a new run directory
    started from another run's checkpoint.
    """

    def __init__(self, run_dir: str | Path) -> None:
        self.run_dir = Path(run_dir)

    def on_fit_start(self, trainer: Any, state: Any) -> None:
        history = state.history
        _replace_rows(self.run_dir / "metrics.csv", list(history[0]) if history else [], history)
        _replace_rows(self.run_dir / "steps.csv", *_rows_before(self.run_dir / "steps.csv", state.step))

    def on_log(self, trainer: Any, state: Any, record: dict[str, float]) -> None:
        _append_rows(self.run_dir / "steps.csv", [record])

    def on_epoch_end(self, trainer: Any, state: Any, record: dict[str, Any]) -> None:
        _append_rows(self.run_dir / "metrics.csv", [record])


class ConfigFile(Callback):
    """``run_dir/config.yaml``: written when the run starts, after every check passed.

    So a run refused or failed at start leaves the old file (or none), and a
    resume that finds the run finished does not rewrite it. A last comment line
    says which optimizer step ran (fused, foreach or for-loop): a comment, so a
    resume of this config chooses again for the machine it runs on.
    """

    def __init__(self, text: str, name: str = "config.yaml") -> None:
        self.text, self.name = text, name

    def on_fit_start(self, trainer: Any, state: Any) -> None:
        from trainwell.fit.kernels import describe

        path = Path(trainer.run_dir) / self.name
        tmp = path.with_name(f".{self.name}.tmp-{os.getpid()}")
        tmp.write_text(f"{self.text}# ran: {describe(trainer.optimizer)}\n")
        os.replace(tmp, path)  # a reader sees the old config or the new one, whole


def __getattr__(name: str) -> Any:
    """``ProgressBar`` lives in console.py (which imports ``Callback`` from here)."""
    if name == "ProgressBar":
        from trainwell.fit.console import ProgressBar

        return ProgressBar
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
