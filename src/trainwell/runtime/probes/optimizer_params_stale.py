"""TW109 optimizer-params-stale: the optimizer steps tensors the model no longer uses,
or keeps state on another device or dtype than its parameters.

Identity, not order: at an optimizer's first step (and on sampled steps) its
``nn.Parameter`` objects are compared with the parameters of the modules that
really ran forward. Stale means some of them belong to no such module while
those modules have trainable parameters no optimizer holds (a re-created
head, ``load_state_dict(assign=True)``, a deepcopy). Tensors that are not
``nn.Parameter`` (an input image being optimized) are never stale.
"""

from __future__ import annotations

from typing import Any

import torch

from trainwell.runtime.location import user_location
from trainwell.runtime.probes import Probe


class OptimizerParamsStale(Probe):
    codes = ("TW109",)

    def __init__(self, session: Any) -> None:
        super().__init__(session)

    def on_step_pre(self, optimizer: torch.optim.Optimizer, closure: Any) -> None:
        info = self.session.info(optimizer)
        if not self.session.checks(info.steps + 1):
            return
        self._check_state(optimizer, info.params)
        self._check_identity(info.params)

    def _check_identity(self, params: list[torch.Tensor]) -> None:
        used = {id(p) for module in self.session.roots() for p in module.parameters()}
        orphans = [p for p in params if isinstance(p, torch.nn.Parameter) and id(p) not in used]
        if not orphans:
            return
        held = {id(p) for _, info in self.session.live_optimizers() for p in info.params}
        unheld = [p for module in self.session.roots() for p in module.parameters() if p.requires_grad and id(p) not in held]
        if not unheld:
            return
        self.session.explained_params.update(id(p) for p in orphans + unheld)
        self.session.report(
            "TW109",
            f"this optimizer steps {len(orphans)} tensor(s) that are no parameter of the model being trained, "
            f"while {len(unheld)} of the model's trainable parameters belong to no optimizer: "
            "the model (or part of it) was replaced after the optimizer was built",
            user_location(),
            hint="build the optimizer after the model is final (after replacing layers, deepcopy or load_state_dict(assign=True))",
        )

    def _check_state(self, optimizer: torch.optim.Optimizer, params: list[torch.Tensor]) -> None:
        for param in params:
            for key, value in optimizer.state.get(param, {}).items():
                if key == "step" or not isinstance(value, torch.Tensor) or value.shape != param.shape:
                    continue
                if value.device != param.device or value.dtype != param.dtype:
                    self.session.report(
                        "TW109",
                        f"{type(optimizer).__name__} state {key!r} is {value.dtype} on {value.device} but its parameter "
                        f"is {param.dtype} on {param.device}: the state was created before the model was moved or cast",
                        user_location(),
                        hint="move or cast the model before building the optimizer",
                    )
                    return
