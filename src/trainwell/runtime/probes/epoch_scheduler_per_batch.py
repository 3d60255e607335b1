"""TW106 epoch-scheduler-per-batch: a schedule sized in epochs stepped once per optimizer step.

A scheduler stepped about as often as its optimizer is "per batch". Its
horizon (StepLR step_size, MultiStepLR last milestone, CosineAnnealingLR
T_max, ExponentialLR steps to a tenth, ReduceLROnPlateau patience) is then
compared with the optimizer steps in one pass of the training DataLoader:
a horizon shorter than one epoch was written in epochs. Without a
DataLoader the epoch is unknown, and only decays that cut the LR a hundred
times within 100 steps (no per-step schedule does that) are reported.
"""

from __future__ import annotations

import math
from typing import Any

from torch.optim import lr_scheduler

from trainwell.runtime.location import Location, user_location
from trainwell.runtime.probes import Probe

_FAST_WINDOW = 100  # steps
_FAST_FACTOR = 0.01


def horizon(scheduler: Any) -> float | None:
    """Steps after which an epoch-style schedule has done its work; None for step-sized kinds."""
    if isinstance(scheduler, lr_scheduler.StepLR):
        return float(scheduler.step_size)
    if isinstance(scheduler, lr_scheduler.MultiStepLR):
        return float(max(scheduler.milestones, default=0))
    if isinstance(scheduler, lr_scheduler.CosineAnnealingLR):
        return float(scheduler.T_max)
    if isinstance(scheduler, lr_scheduler.ExponentialLR):
        return math.log(0.1) / math.log(scheduler.gamma) if 0 < scheduler.gamma < 1 else None
    if isinstance(scheduler, lr_scheduler.ReduceLROnPlateau):
        return float(scheduler.patience + 1)
    return None


def decay_in_window(scheduler: Any) -> float | None:
    """The LR factor over ``_FAST_WINDOW`` steps for the kinds where that is known."""
    if isinstance(scheduler, lr_scheduler.StepLR):
        return scheduler.gamma ** (_FAST_WINDOW // max(scheduler.step_size, 1))
    if isinstance(scheduler, lr_scheduler.ExponentialLR):
        return scheduler.gamma ** _FAST_WINDOW
    if isinstance(scheduler, lr_scheduler.MultiStepLR):
        return scheduler.gamma ** sum(1 for m in scheduler.milestones if m <= _FAST_WINDOW)
    return None


class _Watched:
    __slots__ = ("scheduler", "optimizer_steps_at_first", "count", "where", "done")

    def __init__(self, scheduler: Any, steps: int, where: Location | None) -> None:
        self.scheduler, self.optimizer_steps_at_first, self.where = scheduler, steps, where
        self.count = 0
        self.done = False


class EpochSchedulerPerBatch(Probe):
    codes = ("TW106",)

    def __init__(self, session: Any) -> None:
        super().__init__(session)
        self.watched: dict[int, _Watched] = {}

    def on_scheduler_step(self, scheduler: Any) -> None:
        entry = self.watched.get(id(scheduler))
        if entry is None:
            if horizon(scheduler) is None and decay_in_window(scheduler) is None:
                return
            info = self.session.optimizers.get(id(getattr(scheduler, "optimizer", None)))
            entry = _Watched(scheduler, info.steps if info is not None else 0, user_location())
            self.watched[id(scheduler)] = entry
        entry.count += 1
        if not entry.done and entry.count >= 3:
            self._check(entry)

    def on_finish(self) -> None:
        for entry in self.watched.values():
            if not entry.done:
                self._check(entry)

    def _check(self, entry: _Watched) -> None:
        scheduler = entry.scheduler
        info = self.session.optimizers.get(id(getattr(scheduler, "optimizer", None)))
        if info is None or entry.count < 3:
            return
        optimizer_steps = info.steps - entry.optimizer_steps_at_first + 1
        if entry.count < 0.5 * optimizer_steps:
            return  # stepped far less often than the optimizer: per epoch
        epoch = self.session.epoch_steps
        span = horizon(scheduler)
        name = type(scheduler).__name__
        if epoch is not None and epoch > 1 and span is not None:
            if span < epoch:
                entry.done = True
                self.session.report(
                    "TW106",
                    f"{name} is stepped once per optimizer step, but its horizon ({span:g} steps) is shorter than "
                    f"one epoch ({epoch} steps): it was sized in epochs and runs {epoch}x too fast",
                    entry.where,
                    hint="step it once per epoch (after the batch loop), or size it in steps (e.g. T_max=epochs*len(loader))",
                    step=entry.optimizer_steps_at_first or 1,
                )
            return
        factor = decay_in_window(scheduler)
        if factor is not None and factor < _FAST_FACTOR:
            entry.done = True
            self.session.report(
                "TW106",
                f"{name} is stepped once per optimizer step and cuts the learning rate {1 / max(factor, 1e-300):.3g}x "
                f"within {_FAST_WINDOW} steps: a schedule written in epochs",
                entry.where,
                hint="step it once per epoch (after the batch loop), or choose a per-step decay",
                step=entry.optimizer_steps_at_first or 1,
            )
