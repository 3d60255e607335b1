"""TW306 eval-loader-drops-samples: a loader with ``drop_last=True`` serves an evaluation, which then skips
the samples of its ragged last batch.

A loader built with ``drop_last=True`` whose sampler length is not a multiple
of its batch size is watched pass by pass. A pass judged an evaluation fed
no optimizer step and no backward (none came while its batch was the latest), and its batches went into forwards under
``no_grad``/``inference_mode`` or in eval mode. A pass in train mode through
a model with running statistics (BatchNorm re-estimation) is a calibration,
not a metric, and is silent; so are loaders that feed training steps and
those whose batches divide the samples. Reported once, at the loader's
construction, with the number of samples each evaluation skips.
"""

from __future__ import annotations

import weakref
from typing import Any

import torch
from torch.utils.data import IterableDataset

from trainwell.runtime.location import Location, user_location
from trainwell.runtime.probes import Probe


def dropped(loader: Any) -> int:
    """How many samples each pass over ``loader`` leaves out (0 when nothing is dropped or it cannot tell)."""
    if not getattr(loader, "drop_last", False) or not loader.batch_size or isinstance(loader.dataset, IterableDataset):
        return 0
    try:
        return len(loader.sampler) % loader.batch_size
    except TypeError:  # a sampler without a length
        return 0


def _keeps_running_stats(module: torch.nn.Module) -> bool:
    return any(isinstance(m, torch.nn.modules.batchnorm._NormBase) and m.track_running_stats for m in module.modules())


class EvalLoaderDropsSamples(Probe):
    codes = ("TW306",)

    def __init__(self, session: Any) -> None:
        super().__init__(session)
        self.made: dict[int, tuple[weakref.ref[Any], Location | None]] = {}
        # id(loader) -> [loader ref, trained, evaluated, calibrated, (batch size, samples, skipped)]: the loader
        # may be gone when its last pass is judged at the end
        self.passes: dict[int, list[Any]] = {}
        self.trained: weakref.WeakSet[Any] = weakref.WeakSet()  # loaders that fed a step: never evaluation loaders
        self.current: int | None = None
        self.reported: set[Location | None] = set()

    def on_loader_init(self, loader: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if dropped(loader):
            self.made[id(loader)] = (weakref.ref(loader), user_location())

    def on_loader_iter(self, loader: Any) -> None:
        self._close(id(loader))
        if id(loader) in self.made and self.made[id(loader)][0]() is loader:
            sizes = (loader.batch_size, len(loader.sampler), dropped(loader))
            self.passes[id(loader)] = [weakref.ref(loader), False, False, False, sizes]

    def on_loader_wait(self, loader: Any, seconds: float) -> None:
        self.current = id(loader)

    def on_root_forward(self, module: torch.nn.Module, output: Any) -> None:
        record = self.passes.get(self.current) if self.current is not None else None
        if record is None:
            return
        if not module.training:
            record[2] = True
        elif not torch.is_grad_enabled():
            record[3 if _keeps_running_stats(module) else 2] = True

    def on_backward(self, tensors: tuple[torch.Tensor, ...]) -> None:
        self._trained()

    def on_step_post(self, optimizer: torch.optim.Optimizer) -> None:
        self._trained()

    def _trained(self) -> None:
        """A backward or a step while the latest batch came from a watched loader: it feeds training."""
        record = self.passes.get(self.current) if self.current is not None else None
        if record is not None:
            record[1] = True

    def on_finish(self) -> None:
        for key in list(self.passes):
            self._close(key)

    def _close(self, key: int) -> None:
        record = self.passes.pop(key, None)
        if record is None:
            return
        loader, where = record[0](), self.made[key][1]
        if record[1]:
            if loader is not None:
                self.trained.add(loader)
            return
        if not record[2] or record[3] or (loader is not None and loader in self.trained) or where in self.reported:
            return
        self.reported.add(where)
        batch_size, total, skipped = record[4]
        self.session.report(
            "TW306",
            f"this loader (drop_last=True, batch_size={batch_size}) serves an evaluation: each pass skips the "
            f"last {skipped} of its {total} samples, so the metric is computed on {total - skipped} of them",
            where,
            hint="build evaluation loaders with drop_last=False (the default); keep drop_last=True for training",
            step=self.session.step,
        )
