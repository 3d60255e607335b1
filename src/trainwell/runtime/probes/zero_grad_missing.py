"""TW101 zero-grad-missing: gradients that survive an optimizer step into the next one.

After a step, each parameter's gradient is remembered by identity and
version counter (no values are read, so no host sync). A later backward
that adds onto a gradient nobody touched since that step (not cleared, not
set to None, not zeroed in place) marks it; if the optimizer then steps on
it, the step applied the sum of past gradients. Clearing between that
backward and the step (a GAN's second optimizer clearing before its own
backward) removes the mark, so only a step on stale gradients is reported.
A hand-written update is seen after it happened, when the loop may already
have cleared ``.grad`` by hand: only gradients exactly as the last backward
left them are remembered for it.
"""

from __future__ import annotations

import weakref
from typing import Any

import torch

from trainwell.runtime.location import Location, user_location
from trainwell.runtime.probes import Probe

_Record = tuple[torch.Tensor, "weakref.ref[torch.Tensor]", int]


class ZeroGradMissing(Probe):
    codes = ("TW101",)

    def __init__(self, session: Any) -> None:
        super().__init__(session)
        self.untouched: dict[int, list[_Record]] = {}  # id(optimizer) -> grads as left by its last step
        self.candidates: list[tuple[int, _Record]] = []  # stale before the running backward
        self.stale: dict[int, dict[int, tuple[_Record, Location | None]]] = {}  # id(opt) -> id(param) -> (grad, where)

    def on_step_post(self, optimizer: torch.optim.Optimizer) -> None:
        info = self.session.info(optimizer)
        if not self.session.checks(info.steps + 1):
            self.untouched.pop(id(optimizer), None)
            return
        records = [(p, weakref.ref(p.grad), p.grad._version) for p in info.params if p.grad is not None]
        after_backward = getattr(optimizer, "grads_after_backward", None)
        if after_backward is not None:
            records = [r for r in records if _as_backward_left(after_backward.get(id(r[0])), r)]
        self.untouched[id(optimizer)] = records

    def on_backward(self, tensors: tuple[torch.Tensor, ...]) -> None:
        self.candidates = [
            (key, record)
            for key, records in self.untouched.items()
            for record in records
            if _still_untouched(record)
        ]
        if not self.candidates:
            self.untouched.clear()

    def on_backward_done(self, tensors: tuple[torch.Tensor, ...]) -> None:
        if not self.candidates:
            return
        where = None
        for key, (param, grad_ref, version) in self.candidates:
            grad = param.grad
            if grad is not None and grad is grad_ref() and grad._version != version:
                if where is None:
                    where = user_location()
                self.stale.setdefault(key, {})[id(param)] = ((param, grad_ref, grad._version), where)
                self.untouched[key] = [r for r in self.untouched.get(key, []) if r[0] is not param]
        self.candidates = []

    def on_zero_grad(self, owner: Any, set_to_none: bool) -> None:
        if not self.stale:
            return
        if isinstance(owner, torch.optim.Optimizer):
            self.stale.pop(id(owner), None)
            return
        cleared = {id(p) for p in owner.parameters()}
        for marks in self.stale.values():
            for key in cleared & marks.keys():
                del marks[key]

    def on_step_pre(self, optimizer: torch.optim.Optimizer, closure: Any) -> None:
        marks = self.stale.pop(id(optimizer), None)
        if not marks:
            return
        for (param, grad_ref, _), where in marks.values():
            if param.grad is not None and param.grad is grad_ref():
                self.session.report(
                    "TW101",
                    "this backward() adds onto gradients left from the previous optimizer step, "
                    "and the next step applies their sum: gradients are never cleared between steps",
                    where,
                    hint="call optimizer.zero_grad() once per optimizer step (loop top or after the step)",
                )
                return


def _as_backward_left(snapshot: tuple[torch.Tensor, int] | None, record: _Record) -> bool:
    return snapshot is not None and snapshot[0] is record[1]() and snapshot[1] == record[2]


def _still_untouched(record: _Record) -> bool:
    param, grad_ref, version = record
    grad = param.grad
    return grad is not None and grad is grad_ref() and grad._version == version
