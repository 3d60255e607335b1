"""Hand-written updates as steps: ``p -= lr * p.grad`` under ``no_grad``,
``p.data.add_(p.grad, alpha=-lr)``, a loop with no ``torch.optim`` at all.

After a backward, while no optimizer has stepped yet, the parameters that
hold gradients are remembered with their version counters (an in-place
write under ``no_grad`` bumps them; no value is read). ``p.data`` writes
bypass the counter, so for them values are compared: on checked steps the
norm of every parameter (which ones the loop updates), on the others a copy
of the smallest parameter the loop updated last time. The first event after the update (the next forward, backward,
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
_MAX_QUIET_BACKWARDS = 8  # backwards with no update seen: stop comparing values (saliency, gradient checks)


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
        self.norms: torch.Tensor | None = None  # every watched parameter's norm (checked steps)
        self.copy: tuple[torch.Tensor, torch.Tensor] | None = None  # (parameter, its values) otherwise
        self.updated: set[int] = set()  # id(param) the last .data update changed
        self.armed = False
        self.off = False
        self.idle = 0
        self.backwards_without_update = 0
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
        known = [p for p in params if id(p) in self.updated]
        self.norms, self.copy = None, None
        self.backwards_without_update += 1
        quiet = self.backwards_without_update > _MAX_QUIET_BACKWARDS  # only computing gradients, or accumulating long
        if known and (quiet or not session.checks(session.step + 1)):
            smallest = min(known, key=lambda p: p.numel())
            self.copy = (smallest, smallest.detach().clone())
        elif not quiet:
            self.norms = _norms(params)  # a loop never seen updating by value, past that many: versions only
        self.armed, self.idle = True, 0
        self.backward_at = user_location()

    def on_step_pre(self, optimizer: Any, closure: Any) -> None:
        if optimizer is not self.update and not self.off:
            self.armed, self.off = False, True  # an optimizer steps in this run: its steps are the steps
            self._unsubscribe()

    def _unsubscribe(self) -> None:
        """Leave the hot events (every forward, backward, zero_grad) once an optimizer does the steps."""
        assert self.bus is not None
        for name in ("root_forward", "backward", "backward_done", "zero_grad", "clip", "clip_done", "train_mode", "loader_iter"):
            callbacks = getattr(self.bus, name)
            callback = getattr(self, f"on_{name}")
            if callback in callbacks:
                callbacks.remove(callback)

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

    def on_clip_done(self, params: list[torch.Tensor]) -> None:
        if self.armed:  # clipping rewrites the gradients the update is about to apply
            self.update.grads_after_backward = {id(p): (p.grad, p.grad._version) for p, _ in self.watched if p.grad is not None}  # type: ignore[misc]

    def on_train_mode(self, module: torch.nn.Module, mode: bool) -> None:
        self._check()  # the evaluation that follows an update starts with .eval()

    def on_loader_iter(self, loader: Any) -> None:
        self._check()

    def on_finish(self) -> None:
        self._check()

    def _check(self) -> None:
        if not self.armed:
            return
        changed = [p for p, version in self.watched if p._version != version]
        if not changed:  # a .data update, or none yet
            params = [p for p, _ in self.watched]
            if self.norms is not None:
                differs = (~torch.isclose(_norms(params), self.norms, rtol=0, atol=0, equal_nan=True)).tolist()
                changed = [p for p, moved in zip(params, differs) if moved]
                self.updated = {id(p) for p in changed}
            elif self.copy is not None and not torch.allclose(self.copy[0].detach(), self.copy[1], rtol=0, atol=0, equal_nan=True):
                changed = [p for p in params if id(p) in self.updated]
            if not changed:
                return
        self.armed = False
        self.updated = {id(p) for p in changed}
        self.backwards_without_update = 0
        self.update.param_groups[0]["params"] = changed
        info = self.session.info(self.update)  # type: ignore[arg-type]
        info.refresh(self.update)  # type: ignore[arg-type]
        self.session.register_owner(info)
        info.step_location = self.backward_at
        assert self.bus is not None
        emit(self.bus.step_pre, self.update, None)
        emit(self.bus.step_post, self.update)


def _norms(params: list[torch.Tensor]) -> torch.Tensor:
    return torch.stack([n.float() for n in torch._foreach_norm([p.detach() for p in params])])
