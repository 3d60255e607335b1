"""Callbacks: hooks into the loop, called only where a callback overrides them.

``on_step_end`` runs after every optimizer step and must not read tensor
values (no host sync); values arrive, already on the host, in ``on_log``
(every ``log_every`` steps) and ``on_epoch_end``.
"""

from __future__ import annotations

import csv
import sys
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


class CSVLogger(Callback):
    """``run_dir/steps.csv`` (log records) and ``run_dir/metrics.csv`` (epoch records).

    Appends, so a resumed run continues the same files.
    """

    def __init__(self, run_dir: str | Path) -> None:
        self.run_dir = Path(run_dir)

    def on_log(self, trainer: Any, state: Any, record: dict[str, float]) -> None:
        _append_rows(self.run_dir / "steps.csv", [record])

    def on_epoch_end(self, trainer: Any, state: Any, record: dict[str, Any]) -> None:
        _append_rows(self.run_dir / "metrics.csv", [record])


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) >= 1e-3 or value == 0 else f"{value:.2e}"
    return str(value)


class ProgressBar(Callback):
    """A tqdm bar over optimizer steps, numbers refreshed at log intervals,
    and one table row per epoch."""

    def __init__(self, total_steps: int | None, file: Any = None) -> None:
        self.total = total_steps
        self.file = file or sys.stderr
        self.bar: Any = None
        self._columns: list[str] | None = None
        self._postfix: dict[str, Any] = {}

    def on_fit_start(self, trainer: Any, state: Any) -> None:
        from tqdm.auto import tqdm

        self.bar = tqdm(total=self.total, initial=state.step, unit="step", file=self.file,
                        dynamic_ncols=True, leave=False)

    def on_step_end(self, trainer: Any, state: Any) -> None:
        self.bar.update(1)

    def on_log(self, trainer: Any, state: Any, record: dict[str, float]) -> None:
        self._postfix.update(loss=_fmt(record["train_loss"]), lr=_fmt(record["lr"]),
                             samples_s=f"{record['samples_per_s']:.0f}")
        self.bar.set_postfix(self._postfix, refresh=False)

    def on_epoch_end(self, trainer: Any, state: Any, record: dict[str, Any]) -> None:
        if self._columns is None:
            self._columns = list(record)
            self.bar.write("  ".join(f"{c:>10}" for c in self._columns), file=self.file)
        self.bar.write("  ".join(f"{_fmt(record.get(c, '')):>10}" for c in self._columns),
                       file=self.file)
        self._postfix.update({k: _fmt(v) for k, v in record.items() if k.startswith("val_")})
        self.bar.set_postfix(self._postfix, refresh=False)

    def on_fit_end(self, trainer: Any, result: Any) -> None:
        if self.bar is not None:
            self.bar.close()
