"""Numeric precision of training: one small interface, one class per mode.

The loop never asks which mode it runs in; it calls the same four verbs
(``autocast``, ``backward``, ``unscale``, ``step``) and the mode decides.
"""

from __future__ import annotations

import contextlib
from typing import Any, ContextManager

import torch

from trainwell.errors import TrainwellError

# Stateless, so one instance serves every step; a step runner that is handed it skips the
# ``with`` altogether (see StepRunner), so full precision enters no context per forward.
NO_AUTOCAST = contextlib.nullcontext()


class Precision:
    """Full precision (fp32): every verb is the plain PyTorch call."""

    name = "32"

    def __init__(self, device: torch.device) -> None:
        self.device = device

    def autocast(self) -> ContextManager[Any]:
        """The context the forward pass and the loss run in."""
        return NO_AUTOCAST

    def backward(self, loss: torch.Tensor) -> None:
        loss.backward()

    def unscale(self, optimizer: torch.optim.Optimizer) -> None:
        """Bring gradients to their true scale (needed before clipping)."""

    def step(self, optimizer: torch.optim.Optimizer) -> bool:
        """Step the optimizer; return whether the parameters were updated."""
        optimizer.step()
        return True

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        pass


class BF16Mixed(Precision):
    """bfloat16 autocast: same exponent range as fp32, so no loss scaling."""

    name = "bf16-mixed"

    def autocast(self) -> ContextManager[Any]:
        return torch.autocast(self.device.type, dtype=torch.bfloat16)


class FP16Mixed(Precision):
    """float16 autocast with a GradScaler, which skips steps with inf/nan grads."""

    name = "16-mixed"

    def __init__(self, device: torch.device) -> None:
        super().__init__(device)
        self.scaler = torch.amp.GradScaler(device.type)
        self._stepped = False
        self._hooked: set[int] = set()

    def autocast(self) -> ContextManager[Any]:
        return torch.autocast(self.device.type, dtype=torch.float16)

    def backward(self, loss: torch.Tensor) -> None:
        self.scaler.scale(loss).backward()

    def unscale(self, optimizer: torch.optim.Optimizer) -> None:
        self.scaler.unscale_(optimizer)

    def step(self, optimizer: torch.optim.Optimizer) -> bool:
        if id(optimizer) not in self._hooked:
            # The scaler calls optimizer.step() only when the gradients are
            # finite; a post-hook tells us so without another host sync.
            optimizer.register_step_post_hook(self._mark_stepped)
            self._hooked.add(id(optimizer))
        self._stepped = False
        self.scaler.step(optimizer)
        self.scaler.update()
        return self._stepped

    def _mark_stepped(self, *_: Any) -> None:
        self._stepped = True

    def state_dict(self) -> dict[str, Any]:
        return {"scaler": self.scaler.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if "scaler" in state:
            self.scaler.load_state_dict(state["scaler"])


PRECISIONS: dict[str, type[Precision]] = {
    cls.name: cls for cls in (Precision, BF16Mixed, FP16Mixed)
}


def make_precision(name: str, device: torch.device) -> Precision:
    """Build the precision named ``name`` ("32", "bf16-mixed", "16-mixed")."""
    cls = PRECISIONS.get(str(name))
    if cls is None:
        raise TrainwellError(
            f"precision={name!r} is not known; use one of {', '.join(repr(k) for k in PRECISIONS)}"
        )
    return cls(device)
