"""TW102 zero-grad-wipes-gradients: gradients cleared between backward() and step().

Pure event order: a step whose optimizer saw a backward since its last step,
then a clear of its gradients with no backward after it, applies nothing.
A clear by hand (``p.grad = None``) has no event: then every gradient is
None at the step although a backward ran, and the step line is reported.
"""

from __future__ import annotations

from typing import Any

import torch

from trainwell.runtime.location import Location, user_location
from trainwell.runtime.probes import Probe
from trainwell.runtime.session import sampled


class ZeroGradWipes(Probe):
    codes = ("TW102",)

    def __init__(self, session: Any) -> None:
        super().__init__(session)
        self.cleared: dict[int, tuple[int, Location | None]] = {}  # id(optimizer) -> (seq, where)
        self.fed: dict[int, int] = {}  # id(optimizer) -> seq of the last backward that gave it gradients

    def on_backward_done(self, tensors: tuple[torch.Tensor, ...]) -> None:
        if not sampled(self.session.step + 1):
            return
        for optimizer, info in self.session.live_optimizers():
            if any(p.grad is not None for p in info.params):
                self.fed[id(optimizer)] = self.session.last_backward_seq

    def on_zero_grad(self, owner: Any, set_to_none: bool) -> None:
        session = self.session
        if isinstance(owner, torch.optim.Optimizer):
            info = session.optimizers.get(id(owner))
            if info is not None and session.last_backward_seq < info.last_step_seq:
                return  # nothing was backpropagated since its last step: the usual place
            self.cleared[id(owner)] = (session.tick(), user_location())
            return
        owned = None
        for optimizer, info in session.live_optimizers():
            if session.last_backward_seq < info.last_step_seq:
                continue
            if owned is None:
                owned = {id(p) for p in owner.parameters()}
            if any(id(p) in owned for p in info.params[:1]):
                self.cleared[id(optimizer)] = (session.tick(), user_location())

    def on_step_pre(self, optimizer: torch.optim.Optimizer, closure: Any) -> None:
        if closure is not None:
            return  # LBFGS-style: the closure clears and backpropagates inside the step
        session = self.session
        info = session.info(optimizer)
        cleared = self.cleared.pop(id(optimizer), None)
        backward_since_step = session.last_backward_seq > info.last_step_seq
        if not backward_since_step:
            return
        if cleared is not None and cleared[0] > session.last_backward_seq:
            self._report(cleared[1], "zero_grad() runs after backward() and before this optimizer's step(): the step applies no gradient")
        elif self.fed.get(id(optimizer), -1) > info.last_step_seq and all(p.grad is None for p in info.params):
            self._report(user_location(), "optimizer.step() runs with every gradient None although backward() gave them values since the last step: they were cleared in between")

    def _report(self, where: Location | None, message: str) -> None:
        self.session.report("TW102", message, where, hint="clear gradients before backward() (loop top) or after step(), never between them")
