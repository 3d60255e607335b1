"""The training state: the counters a resume must restore, and nothing else."""

from __future__ import annotations

import dataclasses
from typing import Any


@dataclasses.dataclass
class TrainState:
    """Where training is. Counters are in optimizer steps and micro-batches.

    ``batch`` is the number of micro-batches of ``epoch`` already trained on: a
    resume restarts the epoch's order at that index.
    """

    epoch: int = 0
    step: int = 0
    batch: int = 0
    samples: int = 0
    epoch_start_step: int = 0
    nonfinite_skipped: int = 0
    best: float | None = None
    best_epoch: int | None = None
    bad_epochs: int = 0
    # Running sums read at log intervals (floats: already on the host).
    epoch_loss_sum: float = 0.0
    epoch_loss_count: int = 0
    log_loss_sum: float = 0.0
    log_loss_count: int = 0
    log_samples: int = 0
    # The other scalars a step= returns: name -> [batch-size weighted sum, samples].
    log_extras: dict[str, list] = dataclasses.field(default_factory=dict)
    epoch_extras: dict[str, list] = dataclasses.field(default_factory=dict)
    history: list[dict[str, Any]] = dataclasses.field(default_factory=list)

    def where(self) -> str:
        """Where training stands, for a message: ``step 10, after epoch 2``."""
        if self.batch == 0:
            return f"step {self.step}, after epoch {self.epoch}"
        return f"step {self.step}, in epoch {self.epoch + 1} (batch {self.batch})"

    def state_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def load_state_dict(self, state: dict[str, Any]) -> None:
        names = {f.name for f in dataclasses.fields(self)}
        for k, v in state.items():
            if k in names:
                setattr(self, k, v)
