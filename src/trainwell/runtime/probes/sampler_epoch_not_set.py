"""TW110 sampler-epoch-not-set: a shuffling DistributedSampler starts a new training pass in the
same order as the last one, because nothing moved its epoch (``set_epoch``).

At each pass over a loader whose sampler is a shuffling ``DistributedSampler``,
the order it will yield is read (its own seeded permutation: no global RNG is
drawn). Reported when it equals the previous pass's order and that pass fed
optimizer steps; a single epoch, ``shuffle=False`` and ``set_epoch`` each
epoch are silent.
"""

from __future__ import annotations

import weakref
from typing import Any

from torch.utils.data import DistributedSampler

from trainwell.runtime.location import user_location
from trainwell.runtime.probes import Probe


class SamplerEpochNotSet(Probe):
    codes = ("TW110",)

    def __init__(self, session: Any) -> None:
        super().__init__(session)
        # id(loader) -> (loader, its sampler's order at the pass start, steps at the pass start, passes so far)
        self.passes: dict[int, tuple[weakref.ref[Any], int, int, int]] = {}

    def on_loader_iter(self, loader: Any) -> None:
        sampler = getattr(loader, "sampler", None)
        if not isinstance(sampler, DistributedSampler) or not sampler.shuffle:
            return
        order = hash(tuple(iter(sampler)))
        step = self.session.step
        previous = self.passes.get(id(loader))
        count = 1
        if previous is not None and previous[0]() is loader:
            count = previous[3] + 1
            if previous[1] == order and step > previous[2]:
                self.session.report(
                    "TW110",
                    f"epoch {count - 1} (pass {count} over this loader) reads the {len(sampler)} samples of this rank in "
                    f"exactly the order of epoch {count - 2}: its DistributedSampler is still at epoch {sampler.epoch} "
                    "because nothing calls set_epoch()",
                    user_location(),
                    hint="call sampler.set_epoch(epoch) at the start of every epoch, before iterating the loader",
                )
        self.passes[id(loader)] = (weakref.ref(loader), order, step, count)
