"""TW603 params-not-updated: parameters that get gradients but belong to no
optimizer, and optimizer parameters that never get a gradient.

Gradients are looked at (None or not: no values read) at sampled optimizer
steps; the verdict waits for the end of the run, so an optimizer that steps
late (a GAN's generator every fifth step) is known by then. Tensors
already reported as stale (TW109) and parameters with requires_grad=False
are left out.
"""

from __future__ import annotations

from typing import Any

import torch

from trainwell.runtime.location import Location
from trainwell.runtime.probes import Probe
from trainwell.runtime.session import sampled

_MIN_STEPS = 3


class ParamsNotUpdated(Probe):
    codes = ("TW603",)

    def __init__(self, session: Any) -> None:
        super().__init__(session)
        self.got_grad: set[int] = set()  # id(param) seen with a gradient at a step
        self.orphans: dict[int, tuple[torch.Tensor, str, Location | None]] = {}

    def on_step_pre(self, optimizer: torch.optim.Optimizer, closure: Any) -> None:
        info = self.session.info(optimizer)
        if not sampled(info.steps + 1):
            return
        self.got_grad.update(id(p) for p in info.params if p.grad is not None)
        for root in self.session.roots():
            for name, param in root.named_parameters():
                if param.grad is not None and param.requires_grad and self.session.owner_of(param) is None:
                    self.orphans.setdefault(id(param), (param, f"{type(root).__name__}.{name}", info.step_location))

    def on_finish(self) -> None:
        explained = self.session.explained_params
        orphans = [(n, w) for key, (p, n, w) in self.orphans.items() if self.session.owner_of(p) is None and key not in explained]
        if orphans:
            names = ", ".join(n for n, _ in orphans[:5]) + (" ..." if len(orphans) > 5 else "")
            self.session.report(
                "TW603",
                f"{len(orphans)} parameter(s) receive gradients but belong to no optimizer, so they never change: {names}",
                orphans[0][1],
                hint="pass all trainable parameters to the optimizer (or freeze these with requires_grad_(False))",
            )
        for optimizer, info in self.session.live_optimizers():
            if info.steps < _MIN_STEPS:
                continue
            never = [p for p in info.params if p.requires_grad and id(p) not in self.got_grad and id(p) not in explained]
            if never:
                self.session.report(
                    "TW603",
                    f"{len(never)} of this {type(optimizer).__name__}'s parameters never received a gradient in "
                    f"{info.steps} steps: they are not used by the loss",
                    info.step_location,
                    hint="remove unused parameters from the optimizer, or check that their module is called in forward()",
                )
