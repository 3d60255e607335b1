"""TW401 train-loader-not-shuffled: the DataLoader whose batches feed optimizer
steps was built without shuffle, sampler or batch_sampler, and a second pass
over it feeds steps again: every epoch sees the dataset in the same order.

Loaders that feed no step (validation), a loader read in one pass or once
(``next(iter(loader))``), a dataset that fits in one batch (no order to
repeat), and IterableDataset streams are not reported; any
sampler the user gave is taken as deliberate. The finding's step is the
first step fed by the repeated pass.
"""

from __future__ import annotations

import weakref
from typing import Any

import torch
from torch.utils.data import IterableDataset, SequentialSampler

from trainwell.runtime.location import Location, user_location
from trainwell.runtime.probes import Probe

# DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, ...): 1-based positions in args
_POSITIONAL = {"shuffle": 3, "sampler": 4, "batch_sampler": 5}


class TrainLoaderNotShuffled(Probe):
    codes = ("TW401",)

    def __init__(self, session: Any) -> None:
        super().__init__(session)
        self.fixed_order: weakref.WeakKeyDictionary[Any, Location | None] = weakref.WeakKeyDictionary()
        self.last_batch_from: Any = None
        self.reported: set[int] = set()
        self.passes: dict[int, int] = {}  # id(loader) -> passes that fed a step (the current one counted once)
        self.pass_fed: dict[int, bool] = {}  # id(loader) -> whether its current pass fed a step

    def on_loader_init(self, loader: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        for counts in (self.passes, self.pass_fed):  # a new loader may reuse a dead one's id
            counts.pop(id(loader), None)
        self.reported.discard(id(loader))
        if isinstance(loader.dataset, IterableDataset):
            return
        chosen = [kwargs.get(name, args[pos - 1] if len(args) >= pos else None) for name, pos in _POSITIONAL.items()]
        if not any(chosen) and isinstance(loader.sampler, SequentialSampler) and not _one_batch(loader):
            self.fixed_order[loader] = user_location()

    def on_loader_iter(self, loader: Any) -> None:
        self.pass_fed[id(loader)] = False

    def on_loader_wait(self, loader: Any, seconds: float) -> None:
        self.last_batch_from = weakref.ref(loader)

    def on_step_post(self, optimizer: torch.optim.Optimizer) -> None:
        loader = self.last_batch_from() if self.last_batch_from is not None else None
        if loader is None or id(loader) in self.reported or loader not in self.fixed_order:
            return
        key = id(loader)
        if not self.pass_fed.get(key, True):
            self.pass_fed[key] = True
            self.passes[key] = self.passes.get(key, 0) + 1
        if self.passes.get(key, 0) < 2:
            return
        self.reported.add(key)
        self.session.report(
            "TW401",
            "this DataLoader feeds the training steps and does not shuffle: every epoch sees the batches in the same order",
            self.fixed_order[loader],
            hint="pass shuffle=True (or a sampler) to the training DataLoader",
            step=self.session.step,  # the step its batch just fed
        )


def _one_batch(loader: Any) -> bool:
    try:
        return len(loader) <= 1
    except TypeError:  # a sampler without a length
        return False
