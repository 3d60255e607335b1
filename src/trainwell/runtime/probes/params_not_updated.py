"""TW603 params-not-updated: parameters that get gradients but belong to no
optimizer, and optimizer parameters that never get a gradient.

One model at a time: a parameter counts as left out only if a backward of
this run wrote its gradient while no optimizer seen so far held it, and no
optimizer (or hand-written update) ever takes it up until the end. A model
trained earlier and then dropped (cross-validation folds), frozen or only
evaluated (a teacher) gets no new gradient, so it is not reported. Gradients
are compared by identity and version counter around backward() on checked
steps (no values read); the verdict waits for the end of the run, so an
optimizer that steps late (a GAN's generator every fifth step) is known by
then. Parameters already explained by another finding (TW102, TW108, TW109)
are left out.
"""

from __future__ import annotations

from typing import Any

import torch

from trainwell.runtime.location import Location
from trainwell.runtime.probes import Probe

_MIN_STEPS = 3
_Grad = tuple[torch.Tensor, int, int]  # (param, id(grad), grad version) before a backward


def _grad_key(param: torch.Tensor) -> tuple[int, int]:
    grad = param.grad
    return (0, -1) if grad is None else (id(grad), grad._version)


class ParamsNotUpdated(Probe):
    codes = ("TW603",)

    def __init__(self, session: Any) -> None:
        super().__init__(session)
        self.got_grad: set[int] = set()  # id(param) of optimizer parameters seen with a gradient
        self.orphans: dict[int, tuple[torch.Tensor, str, Location | None, int]] = {}  # (param, name, where, step)
        self.before: list[tuple[torch.Tensor, str, tuple[int, int]]] = []  # unowned params around a backward
        self.waiting: list[tuple[torch.Tensor, int]] = []  # optimizer params not yet seen with a gradient

    def on_backward(self, tensors: tuple[torch.Tensor, ...]) -> None:
        session = self.session
        if not session.checks(session.step + 1):
            return
        self.before = [
            (param, f"{type(root).__name__}.{name}", _grad_key(param))
            for root in session.roots()
            for name, param in root.named_parameters()
            if param.requires_grad and not session.ever_owned(param) and id(param) not in self.orphans
        ]

    def on_backward_done(self, tensors: tuple[torch.Tensor, ...]) -> None:
        for param, name, key in self.before:
            if param.grad is not None and _grad_key(param) != key:
                self.orphans[id(param)] = (param, name, None, self.session.step + 1)
        self.before = []
        self._note_gradients()

    def on_step_pre(self, optimizer: torch.optim.Optimizer, closure: Any) -> None:
        info = self.session.info(optimizer)
        if info.steps == 0:
            self.waiting += [(p, id(optimizer)) for p in info.params]
        for key, (param, name, where, step) in list(self.orphans.items()):
            if self.session.ever_owned(param):
                del self.orphans[key]  # this optimizer holds it: the usual first step
            elif where is None:
                self.orphans[key] = (param, name, info.step_location, step)
        self._note_gradients()

    def _note_gradients(self) -> None:
        """Gradients are looked at (None or not) until every optimizer parameter has had one."""
        if self.waiting:
            self.got_grad.update(id(p) for p, _ in self.waiting if p.grad is not None)
            self.waiting = [(p, o) for p, o in self.waiting if id(p) not in self.got_grad]

    def on_finish(self) -> None:
        session = self.session
        explained = session.explained_params
        orphans = [(n, w, s) for key, (p, n, w, s) in self.orphans.items() if not session.ever_owned(p) and key not in explained]
        if orphans:
            names = ", ".join(n for n, _, _ in orphans[:5]) + (" ..." if len(orphans) > 5 else "")
            where = next((w for _, w, _ in orphans if w is not None), None)
            session.report(
                "TW603",
                f"{len(orphans)} parameter(s) receive gradients but belong to no optimizer, so they never change: {names}",
                where,
                hint="pass all trainable parameters to the optimizer (or freeze these with requires_grad_(False))",
                step=min(s for _, _, s in orphans),
            )
        for optimizer, info in session.live_optimizers():
            if info.steps < _MIN_STEPS or getattr(optimizer, "hand_written", False):
                continue
            never = [p for p in info.params if p.requires_grad and id(p) not in self.got_grad and id(p) not in explained]
            if never:
                session.report(
                    "TW603",
                    f"{len(never)} of this {type(optimizer).__name__}'s parameters never received a gradient in "
                    f"{info.steps} steps: they are not used by the loss",
                    info.step_location,
                    hint="remove unused parameters from the optimizer, or check that their module is called in forward()",
                    step=1,
                )
