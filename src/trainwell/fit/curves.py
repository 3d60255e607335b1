"""A PNG of the training curves: loss, metrics and learning rate per step.

Drawn once, at the end, from the run's ``steps.csv`` / ``metrics.csv`` (so a
resumed run shows its whole history) or from the records kept in memory when
there are no files. Matplotlib renders with Agg, without pyplot: no display needed.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from trainwell.fit.callbacks import Callback

Records = list[dict[str, Any]]


def read_csv(path: str | Path) -> Records:
    """Rows of a CSV log with numbers as floats (empty cells dropped)."""
    path = Path(path)
    if not path.is_file():
        return []
    with open(path, newline="") as f:
        return [{k: float(v) for k, v in row.items() if k and v not in ("", None)}
                for row in csv.DictReader(f)]


def plot_curves(steps: Records, epochs: Records, path: str | Path) -> Path:
    """Write the curves PNG: train/val loss, validation metrics, learning rate.

    ``steps`` are log records (step, train_loss, lr), ``epochs`` epoch records
    (step, val_loss, val_<metric>, lr); both are plotted against the optimizer step.
    """
    # A bare Figure renders PNG through Agg; no pyplot, so no global state or display.
    from matplotlib.figure import Figure

    metric_keys = sorted({k for r in epochs for k in r if k.startswith("val_") and k != "val_loss"})
    panels = ["loss"] + (["metrics"] if metric_keys else []) + ["lr"]
    fig = Figure(figsize=(4.2 * len(panels), 3.4), layout="constrained")
    axes = dict(zip(panels, fig.subplots(1, len(panels), squeeze=False)[0]))

    ax = axes["loss"]
    _line(ax, steps, "train_loss", "train (per log interval)")
    _line(ax, epochs, "train_loss", "train (epoch mean)", marker="o", linestyle="--")
    _line(ax, epochs, "val_loss", "validation", marker="o")
    ax.set_title("loss")
    losses = [y for line in ax.get_lines() for y in line.get_ydata()]
    if losses and min(losses) > 0:
        ax.set_yscale("log")  # late progress is invisible on a linear scale
    if metric_keys:
        for key in metric_keys:
            _line(axes["metrics"], epochs, key, key, marker="o")
        axes["metrics"].set_title("validation metrics")
    lr_source = steps if any("lr" in r for r in steps) else epochs
    _line(axes["lr"], lr_source, "lr", "learning rate")
    axes["lr"].set_title("learning rate")
    for ax in axes.values():
        ax.set_xlabel("optimizer step")
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize="small")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    return path


def plot_run(run_dir: str | Path, path: str | Path | None = None) -> Path:
    """Curves of a run directory from its CSV logs, written to ``run_dir/curves.png``."""
    run_dir = Path(run_dir)
    return plot_curves(read_csv(run_dir / "steps.csv"), read_csv(run_dir / "metrics.csv"),
                       path or run_dir / "curves.png")


class CurvesPlot(Callback):
    """Writes ``curves.png`` at the end of ``fit`` (into the run directory, or ``path``)."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self.steps: Records = []
        self.written: Path | None = None

    def on_log(self, trainer: Any, state: Any, record: dict[str, float]) -> None:
        self.steps.append(dict(record))

    def on_fit_end(self, trainer: Any, result: Any) -> None:
        run_dir = trainer.run_dir
        if run_dir is not None and (Path(run_dir) / "metrics.csv").is_file():
            self.written = plot_run(run_dir, self.path)
        elif self.path is not None or run_dir is not None:
            target = self.path or Path(run_dir) / "curves.png"
            self.written = plot_curves(self.steps, list(result.history), target)


def _line(ax: Any, records: Records, key: str, label: str, **style: Any) -> None:
    points = [(r["step"], r[key]) for r in records if key in r and "step" in r]
    if points:
        xs, ys = zip(*points)
        ax.plot(xs, ys, label=label, **style)
