"""TW401 train-loader-not-shuffled: the DataLoader whose batches feed optimizer
steps was built without shuffle, sampler or batch_sampler (so it reads the
dataset in the same order every epoch).

Loaders that feed no step (validation) and IterableDataset streams are not
reported; any sampler the user gave is taken as deliberate.
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

    def on_loader_init(self, loader: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if isinstance(loader.dataset, IterableDataset):
            return
        chosen = [kwargs.get(name, args[pos - 1] if len(args) >= pos else None) for name, pos in _POSITIONAL.items()]
        if not any(chosen) and isinstance(loader.sampler, SequentialSampler):
            self.fixed_order[loader] = user_location()

    def on_loader_wait(self, loader: Any, seconds: float) -> None:
        self.last_batch_from = weakref.ref(loader)

    def on_step_post(self, optimizer: torch.optim.Optimizer) -> None:
        loader = self.last_batch_from() if self.last_batch_from is not None else None
        if loader is None or id(loader) in self.reported or loader not in self.fixed_order:
            return
        self.reported.add(id(loader))
        self.session.report(
            "TW401",
            "this DataLoader feeds the training steps and does not shuffle: every epoch sees the batches in the same order",
            self.fixed_order[loader],
            hint="pass shuffle=True (or a sampler) to the training DataLoader",
        )
