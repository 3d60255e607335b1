"""What every probe shares during one watched run: the findings, the event
clock, the optimizers seen so far and the step count.

A "step" is an optimizer step or a hand-written update of parameters (see
``hand_updates``): both arrive as ``step_pre``/``step_post`` events. The
session subscribes right after the hand-update detector and before every
probe, so its counters are up to date when the probes' callbacks run.

Step numbers in findings: a finding seen while training step N is in
progress carries N; one seen between steps (a validation pass, a
``torch.load``) carries the number of steps completed, 0 meaning "before
training".
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Callable
from typing import Any, TextIO

import torch

from trainwell.catalog import CATALOG
from trainwell.diagnostic import Finding
from trainwell.runtime.location import Location, user_location

OCCURRENCES = "occurrences"
SAMPLED = "sampled occurrences"

# Probes that inspect every parameter do it on these steps only, so a long
# run pays for a handful of full checks (STYLE habit 15); the steps right
# after every train()/eval() call are checked too (Session.checks), so a
# validation pass in the middle of a run is judged like the first one.
_DENSE_STEPS = 8
_SPARSE_EVERY = 50
_AFTER_MODE_CHANGE = 2


def sampled(step: int) -> bool:
    """Whether step ``step`` (1-based) is one of the regularly sampled ones."""
    return step <= _DENSE_STEPS or step % _SPARSE_EVERY == 0


def step_label(step: int | None) -> str:
    """How a finding's step reads: "before training" for 0."""
    return "before training" if step == 0 else f"step {step}"


class OptimizerInfo:
    """The session's view of one optimizer: its parameters and its step count."""

    __slots__ = ("ref", "params", "groups", "steps", "last_step_seq", "step_location", "__weakref__")

    def __init__(self, optimizer: torch.optim.Optimizer) -> None:
        self.ref = weakref.ref(optimizer)
        self.params: list[torch.Tensor] = []
        self.steps = 0
        self.last_step_seq = -1
        self.step_location: Location | None = None
        self.refresh(optimizer)

    def refresh(self, optimizer: torch.optim.Optimizer) -> None:
        self.params = [p for group in optimizer.param_groups for p in group["params"]]
        self.groups = len(optimizer.param_groups)


class Session:
    """Findings and shared facts of one watched run."""

    def __init__(
        self,
        codes: set[str],
        echo: TextIO | None = None,
        count_kinds: dict[str, str] | None = None,
        sink: Callable[[Finding], None] | None = None,
    ) -> None:
        self.codes = codes
        self.echo = echo
        self.sink = sink  # given: it records and echoes each new finding (a run of many processes)
        self.count_kinds = count_kinds or {}  # code -> what its count counts (see Probe.counts)
        self.findings: dict[tuple[str, str, int], Finding] = {}
        self.seq = 0
        self.step = 0
        self.hand_steps = 0  # steps that were hand-written updates, not Optimizer.step
        self.optimizer_stepped = False  # some torch.optim optimizer stepped in this run
        self.last_step_seq = -1  # the clock at the latest step of any kind
        self.dense_until = 0  # steps up to this one are checked (set by train()/eval() calls)
        self.backwards = 0
        self.last_backward_seq = -1
        self.optimizers: dict[int, OptimizerInfo] = {}
        self._param_owner: dict[int, OptimizerInfo] = {}
        # DataLoader passes: id(loader) -> step count when its current pass began
        self._pass_start: dict[int, int] = {}
        self.epoch_steps: int | None = None  # optimizer steps in one complete pass of the training loader
        self.explained_params: set[int] = set()  # id(param) a probe already reported (no second finding)
        self.cut_steps: set[int] = set()  # steps whose loss reached no parameter (TW108): no validation findings
        self._roots: dict[int, weakref.ref[torch.nn.Module]] = {}  # modules called outside any other module
        self.finished = False

    # -- the clock and the optimizers -------------------------------------------------
    def checks(self, step: int) -> bool:
        """Whether the costly checks look at step ``step``: sampled ones and those right after a mode change."""
        return step <= self.dense_until or sampled(step)

    def on_train_mode(self, module: torch.nn.Module, mode: bool) -> None:
        self.dense_until = self.step + _AFTER_MODE_CHANGE

    def tick(self) -> int:
        self.seq += 1
        return self.seq

    def info(self, optimizer: torch.optim.Optimizer) -> OptimizerInfo:
        info = self.optimizers.get(id(optimizer))
        if info is None or info.ref() is not optimizer:
            info = OptimizerInfo(optimizer)
            self.optimizers[id(optimizer)] = info
            self.register_owner(info)
        return info

    def register_owner(self, info: OptimizerInfo) -> None:
        """Note that ``info``'s optimizer holds its parameters (after a refresh)."""
        self._param_owner.update((id(p), info) for p in info.params)

    def ever_owned(self, param: torch.Tensor) -> bool:
        """Whether some optimizer seen so far held ``param`` (alive or not now)."""
        return id(param) in self._param_owner

    def live_optimizers(self) -> list[tuple[torch.optim.Optimizer, OptimizerInfo]]:
        found = []
        for info in self.optimizers.values():
            optimizer = info.ref()
            if optimizer is not None:
                found.append((optimizer, info))
        return found

    def owner_of(self, param: torch.Tensor) -> OptimizerInfo | None:
        """The optimizer (seen stepping so far) that holds ``param``."""
        info = self._param_owner.get(id(param))
        if info is not None and info.ref() is not None and any(p is param for p in info.params):
            return info
        return None

    def on_root_forward(self, module: torch.nn.Module, output: Any) -> None:
        if id(module) not in self._roots:
            self._roots[id(module)] = weakref.ref(module)

    def roots(self) -> list[torch.nn.Module]:
        """The live modules seen running forward outside any other module (models, loss modules)."""
        found = []
        for key, ref in list(self._roots.items()):
            module = ref()
            if module is None:
                del self._roots[key]
            else:
                found.append(module)
        return found

    def on_loader_iter(self, loader: Any) -> None:
        self._close_pass(id(loader))
        self._pass_start[id(loader)] = self.step

    def on_finish(self) -> None:
        self.finished = True
        for key in list(self._pass_start):
            self._close_pass(key)

    def _close_pass(self, key: int) -> None:
        start = self._pass_start.pop(key, None)
        if start is not None and self.step > start:
            self.epoch_steps = max(self.epoch_steps or 0, self.step - start)

    def on_backward(self, tensors: tuple[torch.Tensor, ...]) -> None:
        self.backwards += 1
        self.last_backward_seq = self.tick()

    def on_step_pre(self, optimizer: torch.optim.Optimizer, closure: Any) -> None:
        info = self.info(optimizer)
        if info.groups != len(optimizer.param_groups):
            info.refresh(optimizer)  # add_param_group
            self.register_owner(info)
        if info.step_location is None:
            info.step_location = user_location()

    def on_step_post(self, optimizer: torch.optim.Optimizer) -> None:
        info = self.info(optimizer)
        info.steps += 1
        info.last_step_seq = self.last_step_seq = self.tick()
        hand_written = getattr(optimizer, "hand_written", False)
        self.optimizer_stepped = self.optimizer_stepped or not hand_written
        if info.steps > self.step:
            self.step = info.steps
            if hand_written:
                self.hand_steps += 1

    # -- findings ---------------------------------------------------------------------
    def report(self, code: str, message: str, location: Location | None, hint: str | None = None, step: int | None = None) -> None:
        """Count a finding at ``location``; the first one at a place is echoed when it happens."""
        if code not in self.codes or location is None:
            return
        path, line = location
        key = (code, path, line)
        finding = self.findings.get(key)
        if finding is not None:
            finding.count += 1
            return
        if step is None:  # the 1-based step in progress (after the run: the last one)
            step = self.step if self.finished else self.step + 1
        finding = Finding(code, message, path, line, hint=hint, step=step)
        finding.extra["count_of"] = self.count_kinds.get(code, OCCURRENCES)
        self.findings[key] = finding
        if self.sink is not None:
            self.sink(finding)
        elif self.echo is not None:
            echo_finding(finding, self.echo)

    def result(self) -> list[Finding]:
        return sorted(self.findings.values(), key=lambda f: (f.step or 0, f.path, f.line, f.code))


def echo_finding(finding: Finding, stream: TextIO, prefix: str = "") -> None:
    """The line (and hint) printed when a finding is first seen; ``prefix`` names the rank."""
    where = f"{display_path(finding.path)}:{finding.line}"
    print(f"trainwell: {prefix}{where}: {finding.code} {CATALOG[finding.code].name} ({step_label(finding.step)}): "
          f"{finding.message}", file=stream)
    if finding.hint:
        print(f"  hint: {finding.hint}", file=stream)
    stream.flush()


def display_path(path: str) -> str:
    """``path`` relative to the working directory when it lies below it."""
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return path
    return path if relative.startswith(os.pardir) else relative

