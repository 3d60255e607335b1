"""TW113 ddp-wrapper-bypassed: a training forward through the module inside a ``DistributedDataParallel``
(``ddp.module(x)``, or the original model object) with no forward through the wrapper before the step.

Every DDP built is noted (its inner module by identity). A forward that no
other module encloses, with gradients enabled, of a wrapped inner module while
the process group has more than one rank, is a candidate; it is reported at the
next optimizer step when no forward through its wrapper happened since the last
step (then DDP's reducer never saw these gradients: nothing was all-reduced).
Forwards under ``no_grad``/``inference_mode`` (evaluation, generation), world
size 1 and micro-batches through the module followed by a wrapper forward
before the step (the reducer then all-reduces the accumulated gradients) are
silent.
"""

from __future__ import annotations

import weakref
from typing import Any

import torch

from trainwell.runtime.location import Location, user_location
from trainwell.runtime.probes import Probe
from trainwell.runtime.probes._group import default_group


class DdpWrapperBypassed(Probe):
    codes = ("TW113",)

    def __init__(self, session: Any) -> None:
        super().__init__(session)
        self.wrapped: dict[int, tuple[weakref.ref[Any], weakref.ref[Any]]] = {}  # id(inner) -> (inner, wrapper)
        self.bypass: tuple[Location | None, int] | None = None  # (where, id(wrapper)) of the first bypass since the step
        self.through: set[int] = set()  # id(wrapper) of the wrappers that ran a forward since the step

    def on_wrap(self, wrapper: Any) -> None:
        if isinstance(wrapper, torch.nn.parallel.DistributedDataParallel):
            self.wrapped[id(wrapper.module)] = (weakref.ref(wrapper.module), weakref.ref(wrapper))

    def on_root_forward(self, module: torch.nn.Module, output: Any) -> None:
        if not self.wrapped:
            return
        if isinstance(module, torch.nn.parallel.DistributedDataParallel):
            self.through.add(id(module))
            return
        entry = self.wrapped.get(id(module))
        if entry is None or entry[0]() is not module or self.bypass is not None or not torch.is_grad_enabled():
            return
        wrapper = entry[1]()
        if wrapper is not None and default_group()[2] > 1:
            self.bypass = (user_location(), id(wrapper))

    def on_step_pre(self, optimizer: torch.optim.Optimizer, closure: Any) -> None:
        if self.bypass is None:
            return
        where, wrapper = self.bypass
        if wrapper not in self.through:
            self.session.report(
                "TW113",
                "this training forward goes through the module inside DistributedDataParallel, not through the "
                "wrapper, and no forward through the wrapper follows before optimizer.step(): DDP never all-reduces "
                "these gradients, each rank steps on its own, and the replicas drift apart",
                where,
                hint="call the wrapper (ddp_model(x)) for every training forward; keep ddp_model.module for "
                     "state_dict(), attributes and no_grad evaluation",
            )

    def on_step_post(self, optimizer: torch.optim.Optimizer) -> None:
        self.bypass = None
        self.through.clear()
