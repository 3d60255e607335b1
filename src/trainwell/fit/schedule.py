"""When the learning-rate scheduler steps.

- ``interval="step"``: after every optimizer step that really updated the
  parameters (a step skipped by the GradScaler does not count);
- ``interval="epoch"``: once after each epoch's training (and validation);
- ``ReduceLROnPlateau``: after each epoch, fed the monitored metric.
"""

from __future__ import annotations

from typing import Any

from torch.optim.lr_scheduler import ReduceLROnPlateau

from trainwell.errors import TrainwellError

INTERVALS = ("epoch", "step")


class Schedule:
    """A scheduler (or none) and the rule for when it steps."""

    def __init__(self, scheduler: Any, interval: str) -> None:
        if interval not in INTERVALS:
            raise TrainwellError(
                f"scheduler_interval={interval!r} is not known; use 'epoch' or 'step'"
            )
        self.scheduler = scheduler
        self.plateau = isinstance(scheduler, ReduceLROnPlateau)
        if self.plateau and interval == "step":
            raise TrainwellError(
                "ReduceLROnPlateau steps on a validation metric, once per epoch; "
                "use scheduler_interval='epoch'"
            )
        self.per_step = scheduler is not None and interval == "step"

    def step_end(self) -> None:
        """Called after an optimizer step that updated the parameters."""
        self.scheduler.step()

    def epoch_end(self, record: dict[str, Any], monitor: str) -> None:
        """Called after each epoch, with the epoch's record."""
        if self.scheduler is None or self.per_step:
            return
        if self.plateau:
            self.scheduler.step(record[monitor])
        else:
            self.scheduler.step()

    def state_dict(self) -> dict[str, Any]:
        return {} if self.scheduler is None else self.scheduler.state_dict()

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if self.scheduler is not None and state:
            self.scheduler.load_state_dict(state)
