"""What every probe shares during one watched run: the findings, the event
clock, the optimizers seen so far and the step count.

The session is the first subscriber of the bus, so its counters are up to
date when the probes' callbacks run.
"""

from __future__ import annotations

import os
import weakref
from typing import Any, TextIO

import torch

from trainwell.catalog import CATALOG
from trainwell.diagnostic import Finding
from trainwell.runtime.location import Location, user_location

# Probes that inspect every parameter do it on these optimizer steps only,
# so a long run pays for a handful of full checks (STYLE habit 15).
_DENSE_STEPS = 8
_SPARSE_EVERY = 50


def sampled(step: int) -> bool:
    """Whether optimizer step ``step`` (1-based) is one the costly checks look at."""
    return step <= _DENSE_STEPS or step % _SPARSE_EVERY == 0


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

    def __init__(self, codes: set[str], echo: TextIO | None = None) -> None:
        self.codes = codes
        self.echo = echo
        self.findings: dict[tuple[str, str, int], Finding] = {}
        self.seq = 0
        self.step = 0
        self.backwards = 0
        self.last_backward_seq = -1
        self.optimizers: dict[int, OptimizerInfo] = {}
        self._param_owner: dict[int, OptimizerInfo] = {}
        # DataLoader passes: id(loader) -> step count when its current pass began
        self._pass_start: dict[int, int] = {}
        self.epoch_steps: int | None = None  # optimizer steps in one complete pass of the training loader
        self.explained_params: set[int] = set()  # id(param) a probe already reported (no second finding)
        self._roots: dict[int, weakref.ref[torch.nn.Module]] = {}  # modules called outside any other module
        self.finished = False

    # -- the clock and the optimizers -------------------------------------------------
    def tick(self) -> int:
        self.seq += 1
        return self.seq

    def info(self, optimizer: torch.optim.Optimizer) -> OptimizerInfo:
        info = self.optimizers.get(id(optimizer))
        if info is None or info.ref() is not optimizer:
            info = OptimizerInfo(optimizer)
            self.optimizers[id(optimizer)] = info
            self._param_owner.update((id(p), info) for p in info.params)
        return info

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
            self._param_owner.update((id(p), info) for p in info.params)
        if info.step_location is None:
            info.step_location = user_location()

    def on_step_post(self, optimizer: torch.optim.Optimizer) -> None:
        info = self.info(optimizer)
        info.steps += 1
        info.last_step_seq = self.tick()
        if info.steps > self.step:
            self.step = info.steps

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
        if step is None:  # the 1-based optimizer step in progress (after the run: the last one)
            step = self.step if self.finished else self.step + 1
        finding = Finding(code, message, path, line, hint=hint, step=step)
        self.findings[key] = finding
        if self.echo is not None:
            where = f"{display_path(path)}:{line}"
            print(f"trainwell: {where}: {code} {CATALOG[code].name} (step {step}): {message}", file=self.echo)
            if hint:
                print(f"  hint: {hint}", file=self.echo)
            self.echo.flush()

    def result(self) -> list[Finding]:
        return sorted(self.findings.values(), key=lambda f: (f.step or 0, f.path, f.line, f.code))


def display_path(path: str) -> str:
    """``path`` relative to the working directory when it lies below it."""
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return path
    return path if relative.startswith(os.pardir) else relative

