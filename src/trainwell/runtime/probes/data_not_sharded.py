"""TW111 data-not-sharded: under DistributedDataParallel with several ranks, the loader that feeds
the steps reads its whole dataset on every rank.

At the first step fed by a loader while a ``DistributedDataParallel`` model
runs in a process group of N > 1: a loader whose sampler reads every sample of
a map-style dataset (``SequentialSampler``, or a ``RandomSampler`` without
replacement over all of it) is a candidate. Whether the ranks hold the *same*
dataset (and not each its own shard, as ``Subset`` by rank builds) is settled
through the process group's key-value store, never a collective: each rank
posts its dataset's size and a fingerprint of its first and last samples (read
with the random generators forked), and checks at later steps, without
waiting, whether every rank has posted (at the end of the run it waits up to
a few seconds for them). Equal everywhere: every rank trains on
all the samples. Reported at the loader's construction.
"""

from __future__ import annotations

import hashlib
import random
import weakref
from datetime import timedelta
from typing import Any

import numpy as np
import torch
from torch.utils.data import (
    BatchSampler,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
)

from trainwell.runtime.location import Location, user_location
from trainwell.runtime.probes import Probe
from trainwell.runtime.probes._group import default_group

_PREFIX = "trainwell/TW111"
_FINAL_WAIT_S = 5


def whole_reader(loader: Any) -> bool:
    """Whether ``loader`` reads every sample of a map-style dataset once per pass, whatever the rank."""
    if isinstance(loader.dataset, IterableDataset) or type(loader.batch_sampler) not in (BatchSampler, type(None)):
        return False
    sampler = loader.sampler
    if type(sampler) is SequentialSampler:
        return True
    return type(sampler) is RandomSampler and not sampler.replacement and sampler.num_samples == len(loader.dataset)


def fingerprint(dataset: Any) -> str:
    """Size and a hash of the first and last samples, read with the random generators forked and fixed."""
    digest = hashlib.sha256(str(len(dataset)).encode())
    with torch.random.fork_rng(devices=[]):
        state, numpy_state = random.getstate(), np.random.get_state()
        try:
            for index in (0, len(dataset) - 1):
                torch.manual_seed(0)
                random.seed(0)
                np.random.seed(0)
                _feed(digest, dataset[index])
        finally:
            random.setstate(state)
            np.random.set_state(numpy_state)
    return digest.hexdigest()


def _feed(digest: Any, sample: Any) -> None:
    if isinstance(sample, torch.Tensor):
        digest.update(sample.detach().cpu().contiguous().numpy().tobytes())
    elif isinstance(sample, dict):
        for key in sorted(sample, key=str):
            _feed(digest, sample[key])
    elif isinstance(sample, (tuple, list)):
        for item in sample:
            _feed(digest, item)
    else:
        digest.update(repr(sample).encode())


class DataNotSharded(Probe):
    codes = ("TW111",)

    def __init__(self, session: Any) -> None:
        super().__init__(session)
        self.made: dict[int, tuple[weakref.ref[Any], Location | None]] = {}
        self.current: weakref.ref[Any] | None = None
        self.ddp = False
        self.judged: set[int] = set()
        self.waiting: list[tuple[str, str, int, int, Location | None, int]] = []  # (key, print, size, world, where, step)
        self.posted = 0

    def on_loader_init(self, loader: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self.made[id(loader)] = (weakref.ref(loader), user_location())

    def on_loader_wait(self, loader: Any, seconds: float) -> None:
        self.current = weakref.ref(loader)

    def on_root_forward(self, module: torch.nn.Module, output: Any) -> None:
        if not self.ddp and isinstance(module, torch.nn.parallel.DistributedDataParallel):
            self.ddp = True

    def on_step_post(self, optimizer: torch.optim.Optimizer) -> None:
        self._compare()
        loader = self.current() if self.current is not None else None
        if loader is None or id(loader) in self.judged or not self.ddp:
            return
        self.judged.add(id(loader))
        store, rank, world = default_group()
        if store is None or world < 2 or not whole_reader(loader):
            return
        try:
            mine = fingerprint(loader.dataset)
            key = f"{_PREFIX}/{self.posted}"
            store.set(f"{key}/{rank}", mine)
        except Exception:  # noqa: BLE001 - a dataset we cannot fingerprint is not judged
            return
        self.posted += 1
        made = self.made.get(id(loader))
        where = made[1] if made is not None and made[0]() is loader else None
        self.waiting.append((key, mine, len(loader.dataset), world, where, self.session.step))

    def on_finish(self) -> None:
        self._compare(wait=True)

    def _compare(self, wait: bool = False) -> None:
        store, _, _ = default_group()
        if store is None:
            return
        for item in list(self.waiting):
            key, mine, size, world, where, step = item
            keys = [f"{key}/{r}" for r in range(world)]
            try:
                if wait:  # the run ends: the other ranks get a few seconds to post theirs
                    store.wait(keys, timedelta(seconds=_FINAL_WAIT_S))
                elif not store.check(keys):
                    continue  # a rank has not posted yet: look again at the next step
                same = all(store.get(k).decode() == mine for k in keys)
            except Exception:  # noqa: BLE001 - the store went away with the group
                same = False
            self.waiting.remove(item)
            if same and where is not None:
                self.session.report(
                    "TW111",
                    f"every one of the {world} ranks reads all {size} samples of this loader's dataset (the same data "
                    f"on each rank, no DistributedSampler): each epoch the {world} ranks train on the same {size} "
                    f"samples, {world * size} reads for {size} distinct samples",
                    where,
                    hint="pass sampler=DistributedSampler(dataset) (and call set_epoch each epoch), or give each rank "
                         "its own shard of the data",
                    step=step,
                )
