"""What a run prints while it trains: a summary at the start, then progress.

In a terminal (or a notebook): a live tqdm bar over optimizer steps, with one
table row per epoch printed above it. Anywhere else (a log file, a pipe, CI): no bar and no
carriage returns, only whole lines — the epoch table, and a step line at a
log interval when the last line is more than ``HEARTBEAT_S`` old, so a long
epoch still shows it is alive. The two never share a line.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from trainwell.errors import TrainwellError
from trainwell.fit.callbacks import Callback
from trainwell.terminal import is_terminal, paint

HEARTBEAT_S = 30.0


def check_device(device: str | None, name: str) -> None:
    """A device this machine has, or one line naming ``name`` (``--device``) and the choices."""
    if device is None:
        return
    import torch

    try:
        parsed = torch.device(device)
    except (RuntimeError, ValueError):
        raise TrainwellError(f"{name} {device}: not a device; use cpu, cuda, cuda:N or mps") from None
    if parsed.type == "cuda":
        if not torch.cuda.is_available():
            why = "has no CUDA support" if torch.version.cuda is None else "sees no CUDA device"
            raise TrainwellError(f"{name} {device}: this PyTorch ({torch.__version__}) {why}; "
                                 "use cpu, or leave the device out to pick one")
        count = torch.cuda.device_count()
        if parsed.index is not None and parsed.index >= count:
            raise TrainwellError(f"{name} {device}: there are {count} CUDA device(s): use cuda:0 "
                                 f"to cuda:{count - 1}")
    elif parsed.type == "mps" and not torch.backends.mps.is_available():
        raise TrainwellError(f"{name} {device}: MPS is not available here; use cpu")
    elif parsed.type not in ("cpu", "cuda", "mps"):
        raise TrainwellError(f"{name} {device}: trainwell trains on cpu, cuda or mps")


def count_parameters(model: Any) -> tuple[int, int]:
    """(trainable, frozen) parameter counts."""
    trainable = frozen = 0
    for p in model.parameters():
        if p.requires_grad:
            trainable += p.numel()
        else:
            frozen += p.numel()
    return trainable, frozen


def print_start(parameters: tuple[int, int], device: Any, precision: str, steps: int,
                batch_size: int | None, accumulate: int, world: int, run_dir: Path,
                file: Any = None, optimizer: str | None = None) -> None:
    """The run in four lines: model size, where it runs, how long and how big a step, where to
    (and, given ``optimizer``, which optimizer step runs: ``AdamW, fused step``)."""
    file = file or sys.stderr
    trainable, frozen = parameters
    processes = f", {world} processes" if world > 1 else ""
    if batch_size is None:
        batch = "set by the DataLoader's sampler"
    else:
        parts = [f"{batch_size} per batch"] + ([f"x {world} processes"] if world > 1 else []) \
            + ([f"x accumulate {accumulate}"] if accumulate > 1 else [])
        total = batch_size * world * accumulate
        batch = f"{total} ({' '.join(parts)})" if len(parts) > 1 else str(total)
    rows = [("parameters", f"{trainable + frozen:,} ({trainable:,} trainable, {frozen:,} frozen)"),
            ("device", f"{device}, precision {precision}{processes}"),
            *([("optimizer", optimizer)] if optimizer else []),
            ("plan", f"{steps:,} optimizer step{'s' if steps != 1 else ''}, effective batch {batch}"),
            ("run directory", str(run_dir))]
    for key, value in rows:
        print(f"{paint(f'{key:<14}', 'bold', file)}{value}", file=file)


class StartSummary(Callback):
    """``print_start`` once training really starts: a run refused at its checks prints only
    its one-line error."""

    def __init__(self, parameters: tuple[int, int], precision: str, steps: int,
                 batch_size: int | None, accumulate: int, world: int, run_dir: Path) -> None:
        self.facts = (parameters, precision, steps, batch_size, accumulate, world, run_dir)

    def on_fit_start(self, trainer: Any, state: Any) -> None:
        from trainwell.fit.kernels import describe

        parameters, precision, *rest = self.facts
        print_start(parameters, trainer.device, precision, *rest, optimizer=describe(trainer.optimizer))


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) >= 1e-3 or value == 0 else f"{value:.2e}"
    return str(value)


class ProgressBar(Callback):
    """Progress on stderr: a live bar in a terminal, whole log lines elsewhere."""

    def __init__(self, total_steps: int | None, file: Any = None, live: bool | None = None) -> None:
        self.total = total_steps
        self.file = file or sys.stderr
        if live is None:  # a bar in a terminal, and in a notebook (tqdm.auto draws a widget)
            live = is_terminal(self.file) or "ipykernel" in sys.modules
        self.live = live
        self.bar: Any = None
        self._columns: list[str] | None = None
        self._postfix: dict[str, Any] = {}
        self._last_line = 0.0

    def on_fit_start(self, trainer: Any, state: Any) -> None:
        self._last_line = time.monotonic()
        if self.live:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=self.total, initial=state.step, unit="step", file=self.file,
                            dynamic_ncols=True, leave=False)

    def on_step_end(self, trainer: Any, state: Any) -> None:
        if self.bar is not None:
            self.bar.update(1)

    def on_log(self, trainer: Any, state: Any, record: dict[str, float]) -> None:
        self._postfix.update(loss=_fmt(record["train_loss"]), lr=_fmt(record["lr"]),
                             samples_s=f"{record['samples_per_s']:.0f}")
        if self.bar is not None:
            self.bar.set_postfix(self._postfix, refresh=False)
        elif time.monotonic() - self._last_line >= HEARTBEAT_S:
            total = f"/{self.total}" if self.total else ""
            values = "  ".join(f"{k} {v}" for k, v in self._postfix.items())
            self._line(f"step {int(record['step'])}{total}  {values}")

    def on_epoch_end(self, trainer: Any, state: Any, record: dict[str, Any]) -> None:
        if self._columns is None:
            self._columns = list(record)
            self._line("  ".join(f"{c:>10}" for c in self._columns))
        self._line("  ".join(f"{_fmt(record.get(c, '')):>10}" for c in self._columns))
        self._postfix.update({k: _fmt(v) for k, v in record.items() if k.startswith("val_")})
        if self.bar is not None:
            self.bar.set_postfix(self._postfix, refresh=False)

    def on_fit_end(self, trainer: Any, result: Any) -> None:
        if self.bar is not None:
            self.bar.close()

    def _line(self, text: str) -> None:
        """A whole line: above the live bar (tqdm clears and redraws it), or plain."""
        self._last_line = time.monotonic()
        if self.bar is not None:
            self.bar.write(text, file=self.file)
        else:
            print(text, file=self.file, flush=True)
