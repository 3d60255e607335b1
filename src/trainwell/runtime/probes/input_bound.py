"""TW404 input-bound: the run spends a large share of each step waiting for the next batch.

Time inside ``DataLoader`` iterator ``__next__`` is compared with the wall
time between optimizer steps, after a warm-up (the first step, and with
workers the first batch of each pass, where they start, are left out).
Reported when more than half of that time is waiting *and* the wait is
several milliseconds per step: a tiny model fed by an in-memory loader waits
a large share of almost nothing, which is not worth a finding. The finding
points at the loop that iterates the loader.
"""

from __future__ import annotations

import time
import weakref
from typing import Any

import torch

from trainwell.runtime.location import Location, user_location
from trainwell.runtime.probes import Probe

_WARMUP_STEPS = 1
_MIN_STEPS = 4
_MIN_WAIT_PER_STEP = 0.005  # seconds
_SHARE = 0.5


class InputBound(Probe):
    codes = ("TW404",)

    def __init__(self, session: Any) -> None:
        super().__init__(session)
        self.iterated_at: weakref.WeakKeyDictionary[Any, Location | None] = weakref.WeakKeyDictionary()
        self.first_batch = True
        self.waited = 0.0
        self.elapsed = 0.0
        self.steps = 0
        self.last_step_time: float | None = None
        self.loader: Any = None
        self.done = False

    def on_loader_iter(self, loader: Any) -> None:
        if not self.done:
            self.iterated_at[loader] = user_location()
            self.first_batch = loader.num_workers > 0

    def on_loader_wait(self, loader: Any, seconds: float) -> None:
        if self.first_batch:
            self.first_batch = False  # worker start-up, not steady state
            return
        if self.last_step_time is not None:
            self.waited += seconds
            self.loader = weakref.ref(loader)

    def on_step_post(self, optimizer: torch.optim.Optimizer) -> None:
        if self.done:
            return
        now = time.perf_counter()
        if self.session.step <= _WARMUP_STEPS or self.last_step_time is None:
            self.last_step_time = now
            self.waited = 0.0
            return
        self.elapsed += now - self.last_step_time
        self.last_step_time = now
        self.steps += 1
        if self.steps >= _MIN_STEPS and self.waited > _SHARE * self.elapsed and self.waited >= _MIN_WAIT_PER_STEP * self.steps:
            self.done = True
            loader = self.loader() if self.loader is not None else None
            share = self.waited / self.elapsed
            self.session.report(
                "TW404",
                f"{share:.0%} of the time between optimizer steps is spent waiting for the next batch: the run is input-bound",
                self.iterated_at.get(loader) if loader is not None else None,
                hint="give the DataLoader num_workers>0, pin_memory=True and persistent_workers=True, or batch in memory",
            )
