"""TW105 scheduler-before-optimizer: ``scheduler.step()`` before the
optimizer's first step, so the schedule's first value is never used.

A GradScaler that skipped the first optimizer step (inf gradients) is not
this bug: the scheduler then follows a completed ``scaler.update()``.
PyTorch's own warning for this case is silenced while watching, since the
finding names the user's line.
"""

from __future__ import annotations

from typing import Any

from trainwell.runtime.location import user_location
from trainwell.runtime.probes import Probe
from trainwell.runtime.session import OCCURRENCES


class SchedulerBeforeOptimizer(Probe):
    codes = ("TW105",)
    counts = OCCURRENCES

    def __init__(self, session: Any) -> None:
        super().__init__(session)
        self.mid_iteration: set[int] = set()  # scalers that scaled a loss and have not updated since
        self.saw_scaler = False

    def on_scaler_scale(self, scaler: Any, loss: Any, scaled: Any) -> None:
        self.saw_scaler = True
        self.mid_iteration.add(id(scaler))

    def on_scaler_update(self, scaler: Any) -> None:
        self.mid_iteration.discard(id(scaler))

    def on_scheduler_step(self, scheduler: Any) -> None:
        optimizer = getattr(scheduler, "optimizer", None)
        if optimizer is None:
            return
        info = self.session.optimizers.get(id(optimizer))
        if info is not None and info.ref() is optimizer and info.steps > 0:
            return
        if self.saw_scaler and not self.mid_iteration:
            return  # the scaler finished an iteration whose step it skipped
        self.session.report(
            "TW105",
            f"{type(scheduler).__name__}.step() is called before the optimizer has stepped: "
            "the first learning rate of the schedule is skipped",
            user_location(),
            hint="call scheduler.step() after optimizer.step() (or scaler.step(optimizer))",
        )

