"""TW201 train-mode-not-restored: optimizer steps taken while the model is in eval mode
after it had trained in train mode (validation switched it and nothing switched it back).

The finding points at the ``.eval()`` / ``.train(False)`` call. Models whose
output does not depend on the mode (no Dropout, no BatchNorm) are not reported.
"""

from __future__ import annotations

from typing import Any

import torch

from trainwell.runtime.location import Location, user_location
from trainwell.runtime.probes import Probe
from trainwell.runtime.probes._modules import has_parameters, mode_matters
from trainwell.runtime.session import sampled


class TrainModeNotRestored(Probe):
    codes = ("TW201",)

    def __init__(self, session: Any) -> None:
        super().__init__(session)
        self.forwarded: dict[int, torch.nn.Module] = {}  # root modules run since the last step
        self.trained_in_train_mode: set[int] = set()
        self.eval_calls: dict[int, Location | None] = {}
        self.mode_changed = True  # check the first step after any train()/eval() call, and sampled steps

    def on_train_mode(self, module: torch.nn.Module, mode: bool) -> None:
        self.mode_changed = True
        if mode:
            self.eval_calls.pop(id(module), None)
        else:
            self.eval_calls[id(module)] = user_location()

    def on_root_forward(self, module: torch.nn.Module, output: Any) -> None:
        self.forwarded[id(module)] = module

    def on_step_pre(self, optimizer: torch.optim.Optimizer, closure: Any) -> None:
        if not (self.mode_changed or sampled(self.session.step + 1)):
            self.forwarded.clear()
            return
        self.mode_changed = False
        info = self.session.info(optimizer)
        for key, module in self.forwarded.items():
            if not has_parameters(module) or self.session.owner_of(next(module.parameters())) is not info:
                continue
            if module.training:
                self.trained_in_train_mode.add(key)
            elif key in self.trained_in_train_mode and key in self.eval_calls and mode_matters(module):
                self.session.report(
                    "TW201",
                    f"{type(module).__name__} trains in eval mode: this .eval() (for validation) is never undone, "
                    "so Dropout stays off and BatchNorm frozen for the rest of training",
                    self.eval_calls[key],
                    hint="call model.train() at the start of every training epoch (or right after validation)",
                )
        self.forwarded.clear()
