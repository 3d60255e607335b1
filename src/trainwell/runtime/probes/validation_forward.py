"""TW202 eval-mode-missing and TW203 no-grad-missing: validation or inference
forward passes in train mode (with Dropout/BatchNorm) or with autograd on.

A forward is "validation" when no backward goes through its output (a hook
on its graph's root node tells) and no optimizer step comes between it and
the model's next training forward (or the end of the run). Forwards whose
output feeds another model's step (a GAN's generator sample, a target
network) are followed by a step and are not validation.

Cost: a place (model, line) whose forwards were all used by a backward
three times is trusted as a training forward and only re-checked on
sampled steps, so a training loop pays for the graph hook a few times.
"""

from __future__ import annotations

from typing import Any

import torch

from trainwell.runtime.location import Location, user_location
from trainwell.runtime.probes import Probe
from trainwell.runtime.probes._modules import has_parameters, mode_matters
from trainwell.runtime.session import sampled

_MAX_PENDING = 256
_TRUSTED_AFTER = 3


class _Forward:
    __slots__ = ("module", "training", "graph", "where", "used", "seq")

    def __init__(self, module: torch.nn.Module, training: bool, graph: bool, where: Location | None, seq: int) -> None:
        self.module, self.training, self.graph, self.where, self.seq = module, training, graph, where, seq
        self.used = False

    def mark_used(self, grad_outputs: Any) -> None:
        self.used = True


def _first_tensor(output: Any) -> torch.Tensor | None:
    if isinstance(output, torch.Tensor):
        return output
    values = output.values() if isinstance(output, dict) else output if isinstance(output, (tuple, list)) else ()
    return next((v for v in values if isinstance(v, torch.Tensor)), None)


class ValidationForward(Probe):
    codes = ("TW202", "TW203")

    def __init__(self, session: Any) -> None:
        super().__init__(session)
        self.pending: list[_Forward] = []
        self.keys: set[tuple[int, Location | None, bool, bool]] = set()
        self.used_count: dict[tuple[int, Location | None], int] = {}  # training forwards seen per place

    def on_root_forward(self, module: torch.nn.Module, output: Any) -> None:
        training = module.training
        grad = torch.is_grad_enabled()
        if not grad and not (training and mode_matters(module)):
            return  # eval + no_grad: nothing to report whatever it is
        if not has_parameters(module):
            return  # loss modules and other parameter-free callables
        tensor = _first_tensor(output)
        node = tensor.grad_fn if tensor is not None and grad else None
        if node is None and not (training and mode_matters(module)):
            return
        where = user_location()
        if node is not None and self.used_count.get((id(module), where), 0) >= _TRUSTED_AFTER and not sampled(self.session.step + 1):
            return
        record = _Forward(module, training, node is not None, where, self.session.tick())
        if node is not None:
            node.register_prehook(record.mark_used)
        elif len(self.pending) >= _MAX_PENDING or (id(module), where, training, False) in self.keys:
            return  # a long no-grad loop: one record per place is enough
        self.keys.add((id(module), where, training, record.graph))
        self.pending.append(record)
        if len(self.pending) > 4 * _MAX_PENDING:
            self.pending = [r for r in self.pending if not r.used][-_MAX_PENDING:]

    def on_step_pre(self, optimizer: torch.optim.Optimizer, closure: Any) -> None:
        if not self.pending:
            return
        last_training: dict[int, int] = {}
        for record in self.pending:
            if record.used:
                last_training[id(record.module)] = record.seq
                key = (id(record.module), record.where)
                self.used_count[key] = self.used_count.get(key, 0) + 1
            elif record.graph:
                self.used_count[(id(record.module), record.where)] = -(10**9)  # a place that also validates: never trusted
        for record in self.pending:
            if not record.used and last_training.get(id(record.module), -1) > record.seq:
                self._report(record)
        self.pending = []
        self.keys = set()

    def on_finish(self) -> None:
        for record in self.pending:
            if not record.used:
                self._report(record)
        self.pending = []

    def _report(self, record: _Forward) -> None:
        name = type(record.module).__name__
        if record.training and mode_matters(record.module):
            self.session.report(
                "TW202",
                f"validation/inference forward of {name} in training mode: Dropout is active and BatchNorm uses "
                "(and updates) batch statistics",
                record.where,
                hint="call model.eval() before validating or predicting (and model.train() before training again)",
            )
        if record.graph:
            self.session.report(
                "TW203",
                f"validation/inference forward of {name} with autograd on: a graph is built that no backward uses",
                record.where,
                hint="wrap validation in `with torch.no_grad():` (or decorate the function with @torch.no_grad())",
            )
