"""TW115 accumulation-leftover: gradient accumulation whose window restarts with every pass over the loader,
so the last micro-batches of a pass are added into the first step of the next one.

The probe counts backward passes per optimizer step. When a new pass over a
loader that fed steps in its last pass begins while backwards made since the
last step have not been cleared (no ``zero_grad``), those are the pass's
leftover. At the next step, if the gradients were still not cleared and the
step applies more backwards than the window the last pass used (its most
common count per step), the window restarted with the pass: that step applies
the leftover on top of a full window. A counter that runs across passes
(the window spans the boundary, the step applies the usual count), a step on
the last batch (no leftover), ``zero_grad`` at the start of a pass and a
window of one are silent. Reported at the step that applies the leftover.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import torch

from trainwell.runtime.location import user_location
from trainwell.runtime.probes import Probe
from trainwell.runtime.session import OCCURRENCES


class AccumulationLeftover(Probe):
    codes = ("TW115",)
    counts = OCCURRENCES

    def __init__(self, session: Any) -> None:
        super().__init__(session)
        self.since_step = 0  # backwards since the last step (or the last zero_grad)
        self.windows: Counter[int] = Counter()  # backwards per step in the current pass
        self.window = 0  # the usual backwards per step of the pass before
        self.current: int | None = None  # id of the loader that yielded the latest batch
        self.fed: dict[int, int] = {}  # id(loader) -> steps its current pass fed
        self.leftover = 0  # backwards carried from the tail of the last pass, not cleared yet

    def on_backward(self, tensors: tuple[torch.Tensor, ...]) -> None:
        self.since_step += 1

    def on_loader_wait(self, loader: Any, seconds: float) -> None:
        self.current = id(loader)

    def on_zero_grad(self, owner: Any, set_to_none: bool) -> None:
        self.since_step = 0
        self.leftover = 0

    def on_loader_iter(self, loader: Any) -> None:
        if not self.fed.pop(id(loader), 0):
            return  # the first pass, or a pass that fed no step (evaluation)
        if self.windows:
            self.window = self.windows.most_common(1)[0][0]
            self.windows.clear()
        if self.since_step and self.window > 1:
            self.leftover = self.since_step

    def on_step_pre(self, optimizer: torch.optim.Optimizer, closure: Any) -> None:
        applied = self.since_step
        if self.leftover and applied > self.window:
            self.session.report(
                "TW115",
                f"this step applies the gradients of {applied} micro-batches: the {self.leftover} left over from "
                f"the end of the last pass over the loader (never stepped, never cleared) plus a full window of "
                f"{applied - self.leftover}; the accumulation window restarts with every epoch",
                user_location(),
                hint="also step on the last batch of the epoch (`or i + 1 == len(loader)`), count micro-batches "
                     "across epochs, or call zero_grad() at the start of every epoch",
            )
        self.leftover = 0
        if applied:
            self.windows[applied] += 1

    def on_step_post(self, optimizer: torch.optim.Optimizer) -> None:
        self.since_step = 0
        if self.current is not None:
            self.fed[self.current] = self.fed.get(self.current, 0) + 1
