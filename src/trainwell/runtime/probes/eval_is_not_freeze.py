"""TW205 eval-is-not-freeze: a part of the model "frozen" with ``.eval()`` (or
``module.requires_grad = False``, a plain attribute) whose parameters still
require grad, sit in the optimizer and change at its steps. A BatchNorm layer
put in eval mode is left alone: freezing its statistics while its affine
parameters train is a common, deliberate fine-tuning recipe.

Checked on sampled steps (and the steps right after a mode change) while some other module with parameters trains in
train mode: the
parameters' version counters before and after ``optimizer.step()`` tell
whether the step wrote them (no values read).
"""

from __future__ import annotations

import weakref
from typing import Any

import torch
from torch.nn.modules.batchnorm import _BatchNorm

from trainwell.runtime.location import Location, user_location
from trainwell.runtime.probes import Probe
from trainwell.runtime.probes._modules import has_parameters


class EvalIsNotFreeze(Probe):
    codes = ("TW205",)

    def __init__(self, session: Any) -> None:
        super().__init__(session)
        self.evals: dict[int, tuple[weakref.ref[torch.nn.Module], Location | None]] = {}
        self.training_forward = False
        self.watching: list[tuple[str, Location | None, list[tuple[torch.Tensor, int]]]] = []

    def on_train_mode(self, module: torch.nn.Module, mode: bool) -> None:
        if mode:
            self.evals.pop(id(module), None)
        else:
            self.evals[id(module)] = (weakref.ref(module), user_location())

    def on_root_forward(self, module: torch.nn.Module, output: Any) -> None:
        # Only a module with parameters trains; a loss module in train mode does
        # not make a whole model left in eval mode a "frozen part" (that is TW201).
        if not self.training_forward and module.training and has_parameters(module):
            self.training_forward = True

    def on_step_pre(self, optimizer: torch.optim.Optimizer, closure: Any) -> None:
        info = self.session.info(optimizer)
        if not self.training_forward or not self.session.checks(info.steps + 1):
            return
        held = {id(p) for p in info.params}
        for ref, where in self.evals.values():
            module = ref()
            if module is not None and not module.training and not isinstance(module, _BatchNorm):
                self._watch(f"{type(module).__name__}.eval()", where, module, held)
        for root in self.session.roots():
            for name, module in root.named_modules():
                if vars(module).get("requires_grad") is False:
                    label = f"`{name or type(module).__name__}.requires_grad = False` (a plain attribute)"
                    self._watch(label, user_location(), module, held)

    def _watch(self, label: str, where: Location | None, module: torch.nn.Module, held: set[int]) -> None:
        params = [(p, p._version) for p in module.parameters() if p.requires_grad and id(p) in held]
        if params:
            self.watching.append((label, where, params))

    def on_step_post(self, optimizer: torch.optim.Optimizer) -> None:
        self.training_forward = False
        for label, where, params in self.watching:
            if any(p._version != version for p, version in params):
                self.session.report(
                    "TW205",
                    f"{label} does not freeze: its parameters still require grad, sit in the optimizer "
                    "and changed at this step",
                    where,
                    hint="freeze with module.requires_grad_(False) and give the optimizer only the trainable parameters",
                    step=self.session.step,  # the step that just wrote them
                )
        self.watching = []
