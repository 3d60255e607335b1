"""TW601 non-finite: the first NaN/Inf loss or gradient, with its step and parameter name.

The losses passed to backward are kept (detached scalars) and every few
steps folded into one device flag vector; on sampled steps and every few
steps the gradient norms are folded the same way. Flags are read one check
later, when the device has long computed them, so the check adds no host sync.
Steps a GradScaler skips because of inf gradients are its normal work and
are not reported; a non-finite *loss* still is.
"""

from __future__ import annotations

from typing import Any

import torch

from trainwell.runtime.location import Location, user_location
from trainwell.runtime.probes import Probe

_GRAD_EVERY = 10


class NonFinite(Probe):
    codes = ("TW601",)

    def __init__(self, session: Any) -> None:
        super().__init__(session)
        self.done = False
        self.scaled = False
        self.losses: list[tuple[int, torch.Tensor]] = []  # this window's (step, detached loss)
        self.loss_flags: list[tuple[list[int], torch.Tensor, Location | None]] = []
        self.grad_flags: list[tuple[int, torch.Tensor, list[torch.Tensor], Location | None]] = []
        self.backward_at: Location | None = None

    def on_scaler_scale(self, scaler: Any, loss: Any, scaled: Any) -> None:
        self.scaled = self.scaled or scaler.is_enabled()

    def on_backward(self, tensors: tuple[torch.Tensor, ...]) -> None:
        if self.done:
            return
        root = tensors[0]
        if self.backward_at is None or self.session.checks(self.session.step + 1):
            self.backward_at = user_location()
        if isinstance(root, torch.Tensor) and root.is_floating_point() and root.numel() == 1:
            self.losses.append((self.session.step + 1, root.detach().reshape(())))

    def _fold_losses(self) -> None:
        if self.losses:
            steps = [step for step, _ in self.losses]
            flags = torch.isfinite(torch.stack([loss.float() for _, loss in self.losses]))
            self.loss_flags.append((steps, flags, self.backward_at))
            self.losses = []

    def on_step_pre(self, optimizer: torch.optim.Optimizer, closure: Any) -> None:
        if self.done or self.scaled:
            return
        step = self.session.step + 1
        if step % _GRAD_EVERY and not self.session.checks(step):
            return
        grads = [p for p in self.session.info(optimizer).params if p.grad is not None]
        if grads:
            norms = torch._foreach_norm([p.grad.detach() for p in grads])
            self.grad_flags.append((step, torch.isfinite(torch.stack([n.float() for n in norms])), grads, self.backward_at))

    def on_step_post(self, optimizer: torch.optim.Optimizer) -> None:
        step = self.session.step
        if self.done or (step % _GRAD_EVERY and not self.session.checks(step)):
            return
        self._read(before=step)  # flags folded at earlier checks are computed by now
        self._fold_losses()

    def on_finish(self) -> None:
        self._fold_losses()
        self._read(before=None)

    def _read(self, before: int | None) -> None:
        if self.done:
            return
        ready = lambda step: before is None or step < before  # noqa: E731
        for steps, flags, where in list(self.loss_flags):
            finite = flags.tolist()
            if not all(finite):
                self._report(steps[finite.index(False)], "the loss is NaN or Inf", where)
                return
        self.loss_flags = []
        for step, flags, params, where in [f for f in self.grad_flags if ready(f[0])]:
            finite = flags.tolist()
            if not all(finite):
                bad = params[finite.index(False)]
                self._report(step, f"the gradient of `{self._name(bad)}` is NaN or Inf", where)
                return
        self.grad_flags = [f for f in self.grad_flags if not ready(f[0])]

    def _name(self, param: torch.Tensor) -> str:
        for root in self.session.roots():
            for name, candidate in root.named_parameters():
                if candidate is param:
                    return f"{type(root).__name__}.{name}"
        return f"parameter of shape {tuple(param.shape)}"

    def _report(self, step: int, what: str, where: Location | None) -> None:
        self.done = True
        self.loss_flags, self.grad_flags = [], []
        self.session.report(
            "TW601",
            f"{what} at step {step}: training from here on is meaningless",
            where,
            hint="lower the learning rate, clip gradients, check the data for NaN/Inf, or use bf16/GradScaler for mixed precision",
            step=step,
        )
