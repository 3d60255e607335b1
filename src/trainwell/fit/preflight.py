"""Checks run before the first step: each finding is one line.

Policy: a setup that cannot train correctly is a ``TrainwellError`` (the run
would crash later or silently train nothing); a setup that is legal but
usually a mistake is a ``PreflightWarning`` (``warnings.warn``), so the run
goes on and the user can filter it.

Errors: the optimizer holds tensors that are not the model's parameters; a
scheduler built for another optimizer; a OneCycleLR shorter than the planned steps (it raises when it runs out);
BatchNorm1d that will see a training batch of one sample (it raises).
Warnings: trainable parameters no optimizer holds; a scheduler horizon that
does not match the planned optimizer steps; ``accumulate`` larger than an
epoch; ``drop_last`` with accumulation; other BatchNorm layers seeing a batch
of one sample.
"""

from __future__ import annotations

import warnings
from typing import Any

import torch
from torch import nn
from torch.optim.lr_scheduler import CosineAnnealingLR, OneCycleLR

from trainwell.errors import TrainwellError


class PreflightWarning(UserWarning):
    """A legal setup that is usually a mistake."""


def _warn(message: str) -> None:
    warnings.warn(message, PreflightWarning, stacklevel=5)  # the user's fit() call


def check_parameters(model: nn.Module, optimizer: torch.optim.Optimizer) -> None:
    """Every trainable parameter is in the optimizer, and it holds nothing else."""
    held = {id(p) for g in optimizer.param_groups for p in g["params"]}
    names = {id(p): n for n, p in model.named_parameters()}
    foreign = [p for g in optimizer.param_groups for p in g["params"] if id(p) not in names]
    if foreign:
        raise TrainwellError(
            f"the optimizer holds {len(foreign)} tensor(s) that are not parameters of the model "
            "(was the model replaced or its weights loaded with assign=True after building the "
            "optimizer?); pass a factory: optimizer=lambda params: torch.optim.AdamW(params)")
    orphans = [n for n, p in model.named_parameters() if p.requires_grad and id(p) not in held]
    if orphans:
        shown = ", ".join(orphans[:5]) + (f" (+{len(orphans) - 5} more)" if len(orphans) > 5 else "")
        _warn(f"{len(orphans)} trainable parameter(s) are in no optimizer group and will not "
              f"train: {shown}; freeze them with trainwell.fit.freeze.freeze(module) or pass "
              "an optimizer factory")


def check_scheduler_optimizer(scheduler: Any, optimizer: torch.optim.Optimizer) -> None:
    """The scheduler drives the Trainer's optimizer, not another one."""
    if scheduler is not None and getattr(scheduler, "optimizer", optimizer) is not optimizer:
        raise TrainwellError(
            "the scheduler was built for another optimizer than the Trainer's, so it would "
            "change no learning rate; pass a factory: scheduler=lambda opt: StepLR(opt, 10)")


def check_schedule(scheduler: Any, interval: str, planned_steps: int, max_epochs: int) -> None:
    """The scheduler's horizon matches the optimizer steps (or epochs) it will see."""
    horizon = max_epochs if interval == "epoch" else planned_steps
    unit = "epochs" if interval == "epoch" else "optimizer steps"
    if isinstance(scheduler, OneCycleLR):
        total = scheduler.total_steps
        if interval == "epoch":
            _warn("OneCycleLR is stepped per epoch (scheduler_interval='epoch'); it is meant to "
                  "step per optimizer step: pass scheduler_interval='step'")
        elif total < planned_steps:
            raise TrainwellError(
                f"OneCycleLR has total_steps={total} but the run plans {planned_steps} optimizer "
                f"steps; it would raise after step {total}: build it with total_steps="
                f"{planned_steps} (steps per epoch already counts accumulation)")
        elif total != horizon:
            _warn(f"OneCycleLR has total_steps={total} but the run plans {planned_steps} "
                  f"optimizer steps: the cycle will not finish; use total_steps={planned_steps}")
    elif isinstance(scheduler, CosineAnnealingLR) and scheduler.T_max != horizon:
        _warn(f"CosineAnnealingLR has T_max={scheduler.T_max} but the run has {horizon} {unit} "
              f"(scheduler_interval={interval!r}): the LR will not end at eta_min; use "
              f"T_max={horizon}")


def check_resumed_schedule(scheduler: Any, interval: str, planned_steps: int) -> None:
    """A resumed OneCycleLR keeps the length it was saved with, and cannot run longer."""
    if (isinstance(scheduler, OneCycleLR) and interval == "step"
            and scheduler.total_steps < planned_steps):
        raise TrainwellError(
            f"the checkpoint's OneCycleLR has total_steps={scheduler.total_steps} but this run "
            f"plans {planned_steps} optimizer steps, and a one-cycle schedule cannot be extended: "
            "resume with the original max_epochs/max_steps, or start a new run")


def check_accumulation(accumulate: int, num_batches: int | None, drop_last: bool) -> None:
    """Accumulation fits in an epoch and is not mixed up with ``drop_last``."""
    if num_batches is not None and accumulate > num_batches:
        _warn(f"accumulate={accumulate} is larger than an epoch ({num_batches} batches): "
              f"each optimizer step sums {num_batches} batches; lower accumulate or the batch size")
    if drop_last and accumulate > 1:
        _warn(f"drop_last=True with accumulate={accumulate}: drop_last drops samples (the last "
              "short batch), not micro-batches; a short last window is already divided by its "
              "real size, so drop_last=False is usually what you want")


def check_batchnorm(model: nn.Module, batch_size: int | None, last_batch_size: int | None) -> None:
    """No BatchNorm layer will see a training batch of a single sample."""
    if 1 not in (batch_size, last_batch_size):
        return
    norms = [(n, m) for n, m in model.named_modules()
             if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not norms:
        return
    where = "every batch" if batch_size == 1 else "the last batch of each epoch"
    name, layer = norms[0]
    message = (f"BatchNorm layer {name!r} ({type(layer).__name__}) will see {where} with 1 "
               "sample in training; change the batch size so that no batch has 1 sample, or "
               "pass a DataLoader with drop_last=True")
    if any(isinstance(m, nn.BatchNorm1d) for _, m in norms):
        raise TrainwellError(message)
    _warn(message)
