"""TW405 random-augmentation-in-eval: an evaluation pass reads data through a random transform.

A pass over a loader is an evaluation pass when it delivered batches, the
model ran one forward per batch (several per batch is deliberate test-time
augmentation, which is silent) and no optimizer stepped during it. After the
first such pass, when the loader's dataset (through ``Subset``) has a
``transform``, its first sample is read twice with the random generators
forked and reseeded differently (the run's own random state is untouched).
Two different reads mean the evaluation data is augmented at random. Reported
when the run ends, at the loader's construction, naming the transform, for
loaders that never fed a training step (the training loader evaluated in
passing keeps its augmentation).
"""

from __future__ import annotations

import random
import weakref
from typing import Any

import numpy as np
import torch
from torch.utils.data import IterableDataset, Subset

from trainwell.runtime.location import Location, user_location
from trainwell.runtime.probes import Probe


class _Pass:
    """One pass over a loader: its batches, the model forwards and the steps while its batch was the latest."""

    __slots__ = ("batches", "forwards", "loader", "trained")

    def __init__(self, loader: Any) -> None:
        self.loader, self.batches, self.forwards, self.trained = weakref.ref(loader), 0, 0, False


class RandomAugmentationInEval(Probe):
    codes = ("TW405",)

    def __init__(self, session: Any) -> None:
        super().__init__(session)
        self.made: dict[int, tuple[weakref.ref[Any], Location | None]] = {}
        self.passes: dict[int, _Pass] = {}
        self.current: _Pass | None = None
        self.checked: set[int] = set()
        self.trained: set[int] = set()  # id of loaders whose passes fed optimizer steps
        self.found: dict[int, tuple[Location | None, str, int]] = {}  # id(loader) -> (construction, transform, step)

    def on_loader_init(self, loader: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self.made[id(loader)] = (weakref.ref(loader), user_location())

    def on_loader_iter(self, loader: Any) -> None:
        self._close(self.passes.pop(id(loader), None))
        self.passes[id(loader)] = _Pass(loader)

    def on_loader_wait(self, loader: Any, seconds: float) -> None:
        current = self.passes.get(id(loader))
        if current is not None and current.loader() is loader:
            current.batches += 1
            self.current = current

    def on_root_forward(self, module: torch.nn.Module, output: Any) -> None:
        if self.current is not None and not isinstance(module, torch.nn.modules.loss._Loss):
            self.current.forwards += 1

    def on_step_post(self, optimizer: torch.optim.Optimizer) -> None:
        if self.current is not None:
            self.current.trained = True

    def on_finish(self) -> None:
        for record in list(self.passes.values()):
            self._close(record)
        self.passes.clear()
        self._report()

    def _close(self, record: _Pass | None) -> None:
        loader = record.loader() if record is not None else None
        if record is None or loader is None:
            return
        if record.trained:
            self.trained.add(id(loader))
            return
        if id(loader) in self.checked or record.batches == 0 or not 0 < record.forwards <= record.batches:
            return  # no batch, a training pass, no model forward, or several views per batch (test-time augmentation)
        self.checked.add(id(loader))
        transform = _transform_of(loader.dataset)
        if transform is None or not _differs(loader.dataset):
            return
        made = self.made.get(id(loader))
        where = made[1] if made is not None and made[0]() is loader else user_location()
        self.found[id(loader)] = (where, _describe(transform), self.session.step)

    def _report(self) -> None:
        for key, (where, transform, step) in self.found.items():
            if key in self.trained:
                continue  # the training loader evaluated in passing: its augmentation is the training pipeline's
            self.session.report(
                "TW405",
                f"this loader feeds evaluation (no optimizer step during its passes) and its data is random: two reads "
                f"of its first sample differ, through the transform {transform}; each evaluation scores different views",
                where,
                hint="give evaluation data a deterministic transform (resize, centre crop, normalise); keep random "
                     "augmentation for the training set",
                step=step,
            )


def _transform_of(dataset: Any) -> Any:
    """The dataset's transform, looking through Subset; None if it has none."""
    while isinstance(dataset, Subset):
        dataset = dataset.dataset
    if dataset is None or isinstance(dataset, IterableDataset):
        return None
    for name in ("transform", "transforms"):
        transform = getattr(dataset, name, None)
        if transform is not None and callable(transform):
            return transform
    return None


def _differs(dataset: Any) -> bool:
    """Whether ``dataset[0]`` read twice, with the random generators reseeded apart, gives two different samples."""
    try:
        len(dataset)
        reads = []
        with torch.random.fork_rng(devices=[]):
            state, numpy_state = random.getstate(), np.random.get_state()
            try:
                for seed in (1, 2):
                    torch.manual_seed(seed)
                    random.seed(seed)
                    np.random.seed(seed)
                    reads.append(dataset[0])
            finally:
                random.setstate(state)
                np.random.set_state(numpy_state)
        return not _same(reads[0], reads[1])
    except Exception:  # noqa: BLE001 - a dataset we cannot read twice is simply not judged
        return False


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and bool(torch.equal(a, b))
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray) or hasattr(a, "__array_interface__"):  # arrays, PIL images
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))
    return bool(a == b)


def _describe(transform: Any) -> str:
    inner = getattr(transform, "transforms", None)
    if isinstance(inner, (list, tuple)):
        return f"`{type(transform).__name__}({', '.join(type(t).__name__ for t in inner)})`"
    return f"`{type(transform).__name__}`"
