"""Hand-written updates as steps: ``p -= lr * p.grad`` under ``no_grad``,
``p.data.add_(p.grad, alpha=-lr)``, a loop with no ``torch.optim`` at all.

After a backward, while no optimizer has stepped yet, the parameters that
hold gradients are remembered with their version counters (an in-place
write under ``no_grad`` bumps them; no value is read), plus a copy of the
smallest one: ``p.data`` writes bypass the counter, so for them the copy is
compared. The first event after the update (the next forward, backward,
``zero_grad``, clip, or the end of the run) sees the change and emits
``step_pre``/``step_post`` for a ``HandWrittenUpdate`` that stands for the
optimizer, so every probe counts and judges that step like an optimizer's.

This detector is the first subscriber of the bus: the step it emits is
counted before the event that revealed it.
"""

from __future__ import annotations

from typing import Any

import torch

from trainwell.runtime.events import Bus, emit
from trainwell.runtime.location import Location, user_location
from trainwell.runtime.session import Session

_MAX_IDLE_CHECKS = 64  # forwards after a backward with no update: an evaluation, stop looking


class HandWrittenUpdate:
    """Stands for the code that updates parameters by hand: probes see an optimizer with no state."""

    hand_written = True

    def __init__(self) -> None:
        self.param_groups: list[dict[str, Any]] = [{"params": []}]
        self.state: dict[Any, Any] = {}
        # id(param) -> (grad, grad version) as the last backward left them: what a probe
        # reads at the step, since the loop may clear .grad before the update is seen
        self.grads_after_backward: dict[int, tuple[torch.Tensor, int]] = {}


class HandUpdates:
    """Bus subscriber that turns in-place parameter updates outside any optimizer into step events."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.bus: Bus | None = None
        self.update = HandWrittenUpdate()
        self.watched: list[tuple[torch.Tensor, int]] = []
        self.copy: tuple[torch.Tensor, torch.Tensor] | None = None
        self.armed = False
        self.off = False
        self.idle = 0
        self.backward_at: Location | None = None

    def on_backward_done(self, tensors: tuple[torch.Tensor, ...]) -> None:
        session = self.session
        if self.off:
            return
        seen: set[int] = set()
        params = []
        for root in session.roots():
            for param in root.parameters():
                if param.grad is not None and id(param) not in seen:
                    seen.add(id(param))
                    params.append(param)
        if not params:
            return
        self.watched = [(p, p._version) for p in params]
        self.update.grads_after_backward = {id(p): (p.grad, p.grad._version) for p in params}  # type: ignore[misc]
        smallest = min(params, key=lambda p: p.numel())
        self.copy = (smallest, smallest.detach().clone())
        self.armed, self.idle = True, 0
        self.backward_at = user_location()

    def on_step_pre(self, optimizer: Any, closure: Any) -> None:
        if optimizer is not self.update:
            self.armed, self.off = False, True  # an optimizer steps in this run: its steps are the steps

    def on_root_forward(self, module: torch.nn.Module, output: Any) -> None:
        if self.armed:
            self.idle += 1
            self._check()
            if self.idle > _MAX_IDLE_CHECKS:
                self.armed = False

    def on_backward(self, tensors: tuple[torch.Tensor, ...]) -> None:
        self._check()

    def on_zero_grad(self, owner: Any, set_to_none: bool) -> None:
        self._check()

    def on_clip(self, params: list[torch.Tensor]) -> None:
        self._check()

    def on_finish(self) -> None:
        self._check()

    def _check(self) -> None:
        if not self.armed:
            return
        changed = [p for p, version in self.watched if p._version != version]
        if not changed:
            param, copy = self.copy  # type: ignore[misc]
            if torch.equal(param.detach(), copy):
                return
            changed = [p for p, _ in self.watched]  # a .data update: every parameter with a gradient takes part
        self.armed = False
        self.update.param_groups[0]["params"] = changed
        info = self.session.info(self.update)  # type: ignore[arg-type]
        info.refresh(self.update)  # type: ignore[arg-type]
        self.session.register_owner(info)
        info.step_location = self.backward_at
        assert self.bus is not None
        emit(self.bus.step_pre, self.update, None)
        emit(self.bus.step_post, self.update)
