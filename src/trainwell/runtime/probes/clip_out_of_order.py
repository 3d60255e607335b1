"""TW103 clip-out-of-order and TW104 clip-scaled-gradients.

TW103: a clip with no backward() since the optimizer's last step clips
either nothing (before backward) or gradients already applied (after step).
TW104: a clip while an enabled GradScaler has scaled this iteration's loss
and ``unscale_`` was not called for the optimizer: the threshold is compared
with gradients multiplied by the scale.
"""

from __future__ import annotations

from typing import Any

import torch

from trainwell.runtime.location import user_location
from trainwell.runtime.probes import Probe
from trainwell.runtime.session import OCCURRENCES


class ClipOutOfOrder(Probe):
    codes = ("TW103", "TW104")
    counts = OCCURRENCES

    def __init__(self, session: Any) -> None:
        super().__init__(session)
        self.scaled: dict[int, Any] = {}  # id(scaler) -> scaler, scaled since its last update()
        self.unscaled: set[int] = set()  # id(optimizer) unscaled since the scaler's update()
        # clips since the last step, waiting to see whether a backward adds to what they clipped
        self.pending: list[tuple[list[torch.Tensor], Any, bool]] = []
        self.snapshot: list[tuple[int, list[tuple[torch.Tensor, Any, int]]]] = []

    def on_backward(self, tensors: tuple[torch.Tensor, ...]) -> None:
        self.snapshot = [
            (index, [(p, p.grad, p.grad._version if p.grad is not None else -1) for p in params])
            for index, (params, _, confirmed) in enumerate(self.pending) if not confirmed
        ]

    def on_backward_done(self, tensors: tuple[torch.Tensor, ...]) -> None:
        for index, grads in self.snapshot:
            if any(p.grad is not g or (g is not None and g._version != v) for p, g, v in grads):
                params, where, _ = self.pending[index]
                self.pending[index] = (params, where, True)
        self.snapshot = []

    def on_step_pre(self, optimizer: torch.optim.Optimizer, closure: Any) -> None:
        for _, where, confirmed in self.pending:
            if confirmed:
                self._report_order(where)
        self.pending = []

    def _report_order(self, where: Any) -> None:
        self.session.report(
            "TW103",
            "gradient clipping runs before a backward() that still adds to the gradients this step applies "
            "(or after the step): it clips nothing useful",
            where,
            hint="clip between the last loss.backward() and optimizer.step()",
        )

    def on_scaler_scale(self, scaler: Any, loss: Any, scaled: Any) -> None:
        if scaler.is_enabled():
            self.scaled[id(scaler)] = scaler

    def on_scaler_unscale(self, scaler: Any, optimizer: torch.optim.Optimizer) -> None:
        self.unscaled.add(id(optimizer))

    def on_scaler_update(self, scaler: Any) -> None:
        self.scaled.pop(id(scaler), None)
        self.unscaled.clear()
        # update() ends the iteration even when the scaler skipped the step
        # (inf gradients): its clips belonged to that iteration, not the next.
        self.pending = []

    def on_clip(self, params: list[torch.Tensor]) -> None:
        session = self.session
        info = session.owner_of(params[0]) if params else None
        last_step = info.last_step_seq if info is not None else max((i.last_step_seq for i in session.optimizers.values()), default=-1)
        if session.last_backward_seq < last_step or session.backwards == 0 or (info is None and session.last_backward_seq < 0):
            self._report_order(user_location())
            return
        self.pending.append((params, user_location(), False))
        if self.scaled:
            unscaled = (info.ref() is not None and id(info.ref()) in self.unscaled) if info is not None else bool(self.unscaled)
            if not unscaled:
                session.report(
                    "TW104",
                    "gradients are clipped while they are still multiplied by the GradScaler's scale: "
                    "the threshold applies to scaled gradients",
                    user_location(),
                    hint="call scaler.unscale_(optimizer) right before clipping",
                )
