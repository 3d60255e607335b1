"""TW202 eval-mode-missing and TW203 no-grad-missing: validation or inference
forward passes in train mode (with Dropout/BatchNorm) or with autograd on.

A forward is "validation" when no backward goes through its output (a hook
on its graph's root node tells) and no optimizer step comes between it and
the model's next training forward (or the end of the run). Forwards whose
output feeds another model's step (a GAN's generator sample, a target
network) are followed by a step and are not validation.

Cost: a place (model, line) whose forwards were all used by a backward
three times is trusted as a training forward: its later forwards only note
that the model trained (no graph hook) and are re-checked on sampled steps,
so a training loop pays for the graph hook a few times. Validation places
are never trusted, so every validation pass is judged, the first, the
middle and the last alike; a finding's step is the number of steps
completed before the forward (0: before training).
"""

from __future__ import annotations

from typing import Any

import torch

from trainwell.runtime.location import Location, caller_location
from trainwell.runtime.probes import Probe
from trainwell.runtime.probes._modules import first_tensor, mode_matters, module_facts

_MAX_PENDING = 256
_TRUSTED_AFTER = 3


class _Forward:
    __slots__ = ("module", "training", "graph", "where", "used", "seq", "step")

    def __init__(self, module: torch.nn.Module, training: bool, graph: bool, where: Location | None, seq: int, step: int) -> None:
        self.module, self.training, self.graph, self.where, self.seq, self.step = module, training, graph, where, seq, step
        self.used = False

    def mark_used(self, grad_outputs: Any) -> None:
        self.used = True


class ValidationForward(Probe):
    codes = ("TW202", "TW203")

    def __init__(self, session: Any) -> None:
        super().__init__(session)
        self.pending: list[_Forward] = []
        self.keys: set[tuple[int, Location | None, bool, bool]] = set()
        self.used_count: dict[tuple[int, Location | None], int] = {}  # training forwards seen per place
        self.trusted_training: dict[int, int] = {}  # id(module) -> seq of its last forward at a trusted place
        self.trained: set[int] = set()  # id(module) of models that had a training forward
        self.runs: dict[tuple[int, Location | None], int] = {}  # forwards recorded per place since the last step
        self.checking = True  # whether the step in progress is a checked one (kept up to date: read per forward)

    def on_step_post(self, optimizer: torch.optim.Optimizer) -> None:
        self.checking = self.session.checks(self.session.step + 1)

    def on_train_mode(self, module: torch.nn.Module, mode: bool) -> None:
        self.checking = self.session.checks(self.session.step + 1)

    def on_root_forward(self, module: torch.nn.Module, output: Any) -> None:
        # on every top-level forward: the common case (a trusted training place) is kept short
        training = module.training
        grad = torch.is_grad_enabled()
        if not grad and not training:
            return  # eval + no_grad: nothing to report whatever it is
        _, parameters, matters = module_facts(module)
        matters = training and matters
        if not parameters or not (grad or matters):
            return  # loss modules and other parameter-free callables; train mode without Dropout/BatchNorm
        tensor = output if isinstance(output, torch.Tensor) else first_tensor(output)
        node = tensor.grad_fn if tensor is not None and grad else None
        if node is None and not matters:
            return
        where = caller_location(3)  # this callback <- Module.__call__'s wrapper <- the caller
        session = self.session
        if node is not None and not self.checking and self.used_count.get((id(module), where), 0) >= _TRUSTED_AFTER:
            self.trusted_training[id(module)] = session.tick()  # a training place: this forward trains
            return
        self.runs[(id(module), where)] = self.runs.get((id(module), where), 0) + 1
        record = _Forward(module, training, node is not None, where, session.tick(), session.step)
        if node is not None:
            node.register_prehook(record.mark_used)
        elif len(self.pending) >= _MAX_PENDING or (id(module), where, training, False) in self.keys:
            return  # a long no-grad loop: one record per place is enough
        self.keys.add((id(module), where, training, record.graph))
        self.pending.append(record)
        if len(self.pending) > 4 * _MAX_PENDING:
            self.pending = [r for r in self.pending if not r.used][-_MAX_PENDING:]

    def on_step_pre(self, optimizer: torch.optim.Optimizer, closure: Any) -> None:
        last_training, self.trusted_training = self.trusted_training, {}
        self.trained.update(last_training)
        self.runs = {}
        if not self.pending:
            return
        for record in self.pending:
            if record.used:
                last_training[id(record.module)] = max(record.seq, last_training.get(id(record.module), -1))
                self.trained.add(id(record.module))
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
        # After the last step: the final test of a model that trained. A model that never trained
        # in a step (a target network, demo or test code) is left alone, and so is one prediction
        # with autograd on in train mode (a tutorial's plot): TW203 there needs a pass (the place
        # run twice) or an .eval() that shows an inference pass was meant.
        for record in self.pending:
            if record.used or id(record.module) not in self.trained:
                continue
            once = self.runs.get((id(record.module), record.where), 0) < 2 and record.training
            self._report(record, graph=record.graph and not once)
        self.pending = []

    def _report(self, record: _Forward, graph: bool | None = None) -> None:
        if record.step + 1 in self.session.cut_steps:
            return  # its loss was cut (TW108): the output went unused for that reason
        name = type(record.module).__name__
        if record.training and mode_matters(record.module):
            self.session.report(
                "TW202",
                f"validation/inference forward of {name} in training mode: Dropout is active and BatchNorm uses "
                "(and updates) batch statistics",
                record.where,
                hint="call model.eval() before validating or predicting (and model.train() before training again)",
                step=record.step,
            )
        if record.graph if graph is None else graph:
            self.session.report(
                "TW203",
                f"validation/inference forward of {name} with autograd on: a graph is built that no backward uses",
                record.where,
                hint="wrap validation in `with torch.no_grad():` (or decorate the function with @torch.no_grad())",
                step=record.step,
            )
