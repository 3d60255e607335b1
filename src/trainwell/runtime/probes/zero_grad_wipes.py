"""TW102 zero-grad-wipes-gradients: gradients cleared between backward() and step().

Pure event order: a step whose optimizer saw a backward since its last step,
then a clear of its gradients with no backward after it, applies nothing.
A clear by hand (``p.grad = None``) has no event: then every gradient is
None at the step although a backward ran, and the step line is reported.
For a hand-written update, a ``zero_grad()`` after the backward and before
the parameters changed is the same bug (the update it precedes applies
nothing). The wiped parameters are not also reported as never receiving a
gradient (TW603).
"""

from __future__ import annotations

from typing import Any

import torch

from trainwell.runtime.location import Location, user_location
from trainwell.runtime.probes import Probe


class ZeroGradWipes(Probe):
    codes = ("TW102",)

    def __init__(self, session: Any) -> None:
        super().__init__(session)
        self.cleared: dict[int, tuple[int, Location | None]] = {}  # id(optimizer) -> (seq, where)
        self.fed: dict[int, int] = {}  # id(optimizer) -> seq of the last backward that gave it gradients
        self.module_cleared: tuple[int, Location | None, set[int]] | None = None  # Module.zero_grad after a backward

    def on_backward_done(self, tensors: tuple[torch.Tensor, ...]) -> None:
        if not self.session.checks(self.session.step + 1):
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
        if session.last_backward_seq > session.last_step_seq and not session.optimizer_stepped:
            self.module_cleared = (session.tick(), user_location(), {id(p) for p in owner.parameters()})
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
        module_cleared, self.module_cleared = self.module_cleared, None
        backward_since_step = session.last_backward_seq > info.last_step_seq
        if not backward_since_step:
            return
        if getattr(optimizer, "hand_written", False):
            # the detector saw the parameters unchanged at that zero_grad (it checks first), changed now
            if module_cleared is not None and module_cleared[0] > session.last_backward_seq and any(id(p) in module_cleared[2] for p in info.params):
                self._report(info, module_cleared[1], "zero_grad() runs after backward() and before the hand-written update: the update applies no gradient")
            return
        if cleared is not None and cleared[0] > session.last_backward_seq:
            self._report(info, cleared[1], "zero_grad() runs after backward() and before this optimizer's step(): the step applies no gradient")
        elif self.fed.get(id(optimizer), -1) > info.last_step_seq and all(p.grad is None for p in info.params):
            self._report(info, user_location(), "optimizer.step() runs with every gradient None although backward() gave them values since the last step: they were cleared in between")

    def _report(self, info: Any, where: Location | None, message: str) -> None:
        self.session.explained_params.update(id(p) for p in info.params)  # not also TW603's "never received a gradient"
        self.session.report("TW102", message, where, hint="clear gradients before backward() (loop top) or after step(), never between them")
