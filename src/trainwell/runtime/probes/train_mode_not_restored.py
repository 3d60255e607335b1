"""TW201 train-mode-not-restored: steps taken while the model is in eval mode,
after an ``.eval()`` for evaluation that nothing undid.

Whatever the order: the model trained in train mode before the ``.eval()``
(validation in the middle of training), or it was evaluated after the
``.eval()`` and then trained (an evaluation at iteration 0 that never calls
``train()``). A model put in eval mode and trained with no evaluation in
between is left alone: that may be deliberate (no dropout on purpose), and
so is a model that arrives in eval mode without an ``.eval()`` seen (a
library loader). Models whose output does not depend on the mode (no
Dropout, no BatchNorm) are never reported. The finding points at the
``.eval()`` / ``.train(False)`` call; the step after every mode change is
checked, so the first step trained in eval mode is the one reported.
"""

from __future__ import annotations

from typing import Any

import torch

from trainwell.runtime.location import Location, user_location
from trainwell.runtime.probes import Probe
from trainwell.runtime.probes._modules import has_parameters, mode_matters


class TrainModeNotRestored(Probe):
    codes = ("TW201",)

    def __init__(self, session: Any) -> None:
        super().__init__(session)
        self.forwarded: dict[int, torch.nn.Module] = {}  # root modules run since the last step
        self.trained_in_train_mode: set[int] = set()
        self.eval_calls: dict[int, Location | None] = {}
        self.evaluated: set[int] = set()  # modules run without autograd after their .eval()
        self.deliberate: set[int] = set()  # modules trained in eval mode before any evaluation
        self.mode_changed = True  # check the first step after any train()/eval() call, and sampled steps

    def on_train_mode(self, module: torch.nn.Module, mode: bool) -> None:
        self.mode_changed = True
        if mode:
            self.eval_calls.pop(id(module), None)
            self.evaluated.discard(id(module))
        else:
            self.eval_calls[id(module)] = user_location()

    def on_root_forward(self, module: torch.nn.Module, output: Any) -> None:
        key = id(module)
        self.forwarded[key] = module
        if not module.training and key in self.eval_calls and not torch.is_grad_enabled():
            self.evaluated.add(key)

    def on_step_pre(self, optimizer: torch.optim.Optimizer, closure: Any) -> None:
        if not (self.mode_changed or self.session.checks(self.session.step + 1)):
            self.forwarded.clear()
            return
        self.mode_changed = False
        info = self.session.info(optimizer)
        for key, module in self.forwarded.items():
            if not has_parameters(module) or self.session.owner_of(next(module.parameters())) is not info:
                continue
            if module.training:
                self.trained_in_train_mode.add(key)
            elif key in self.deliberate or key not in self.eval_calls or not mode_matters(module):
                continue
            elif key not in self.trained_in_train_mode and key not in self.evaluated:
                self.deliberate.add(key)
            else:
                self.session.report(
                    "TW201",
                    f"{type(module).__name__} trains in eval mode: this .eval() (for evaluation) is never undone, "
                    "so Dropout stays off and BatchNorm frozen for the training that follows",
                    self.eval_calls[key],
                    hint="call model.train() at the start of every training epoch (or right after evaluation)",
                )
        self.forwarded.clear()
