"""Several optimizers (a GAN, actor-critic): the user's step decides the order, the Trainer
owns what each optimizer's step is.

``Trainer(model, {"generator": factory, "discriminator": factory}, step=gan_step)``:
a key that names a submodule gives its factory that submodule's trainable
parameters (a built optimizer may have any name). The step is
``step(model, batch, optimize)`` and calls ``optimize(name, loss)`` once per
optimizer, in the order the algorithm needs; each call runs, for that
optimizer only and in this order:

    zero_grad -> backward (scaled by its own GradScaler) -> unscale -> clip
    -> optimizer.step -> its per-step scheduler (only if it stepped) -> zero_grad

Zeroing first matters: another loss of the same step (the generator's, which
backpropagates through the discriminator) may have left gradients in this
optimizer's parameters. The sets below give the Trainer one optimizer, one
precision and one schedule to checkpoint, restore and log, whatever their number.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from typing import Any, ContextManager

import torch
from torch import nn

from trainwell.errors import TrainwellError
from trainwell.fit.precision import Precision
from trainwell.fit.schedule import Schedule
from trainwell.fit.step import StepRunner, extras_of, step_result


def build(model: nn.Module, spec: Mapping[str, Any]) -> dict[str, torch.optim.Optimizer]:
    """The named optimizers of ``spec`` (each an Optimizer, or a factory of a submodule's
    trainable parameters); no parameter in two of them."""
    if len(spec) < 2:
        raise TrainwellError(f"optimizer= is a dict of {len(spec)}; pass one optimizer (or "
                             "factory) itself, or a dict of two or more named ones")
    built: dict[str, torch.optim.Optimizer] = {}
    for name, value in spec.items():
        if isinstance(value, torch.optim.Optimizer):
            built[name] = value
            continue
        if not callable(value):
            raise TrainwellError(f"optimizer {name!r} is a {type(value).__name__}; pass a "
                                 "torch.optim.Optimizer or a factory, e.g. lambda params: "
                                 "torch.optim.Adam(params, lr=2e-4)")
        try:
            module = model.get_submodule(name)
        except AttributeError:
            children = ", ".join(n for n, _ in model.named_children()) or "none"
            raise TrainwellError(
                f"optimizer {name!r} is a factory, so its name must be a submodule of the model "
                f"(its children: {children}); name it after one, or pass a built optimizer"
            ) from None
        opt = value([p for p in module.parameters() if p.requires_grad])
        if not isinstance(opt, torch.optim.Optimizer):
            raise TrainwellError(f"the factory of optimizer {name!r} returned a "
                                 f"{type(opt).__name__}; it must return a torch.optim.Optimizer")
        built[name] = opt
    owner: dict[int, str] = {}
    for name, opt in built.items():
        for group in opt.param_groups:
            for p in group["params"]:
                if owner.setdefault(id(p), name) != name:
                    raise TrainwellError(f"optimizers {owner[id(p)]!r} and {name!r} hold the same "
                                         "parameter; give each optimizer its own parameters")
    return built


def schedulers(spec: Any, optimizers: Mapping[str, torch.optim.Optimizer]) -> dict[str, Any]:
    """The named schedulers (a dict keyed like the optimizers; values built or factories)."""
    if spec is None:
        return {}
    if not isinstance(spec, Mapping):
        raise TrainwellError("with several optimizers, pass scheduler= as a dict keyed like "
                             f"optimizer= ({', '.join(optimizers)}), e.g. {{'generator': "
                             "lambda opt: StepLR(opt, 10)}")
    unknown = [k for k in spec if k not in optimizers]
    if unknown:
        raise TrainwellError(f"scheduler {unknown[0]!r} names no optimizer; the optimizers are "
                             f"{', '.join(optimizers)}")
    return {name: (s(optimizers[name]) if not hasattr(s, "step") and callable(s) else s)
            for name, s in spec.items()}


class OptimizerSet:
    """Several named optimizers, seen by the loop, checkpoints and preflight as one."""

    def __init__(self, optimizers: dict[str, torch.optim.Optimizer]) -> None:
        self.optimizers = optimizers

    @property
    def param_groups(self) -> list[dict[str, Any]]:
        """Every optimizer's groups, in order (the first's learning rate is logged as ``lr``)."""
        return [g for opt in self.optimizers.values() for g in opt.param_groups]

    def zero_grad(self, set_to_none: bool = True) -> None:
        for opt in self.optimizers.values():
            opt.zero_grad(set_to_none=set_to_none)

    def state_dict(self) -> dict[str, Any]:
        return {name: opt.state_dict() for name, opt in self.optimizers.items()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        _same_names("optimizer", state, self.optimizers)
        for name, opt in self.optimizers.items():
            opt.load_state_dict(state[name])


class PrecisionSet(Precision):
    """One precision (and so one GradScaler under 16-mixed) per optimizer; one autocast."""

    def __init__(self, precisions: dict[str, Precision]) -> None:
        first = next(iter(precisions.values()))
        super().__init__(first.device)
        self.precisions, self.name = precisions, first.name

    def autocast(self) -> ContextManager[Any]:
        return next(iter(self.precisions.values())).autocast()

    def state_dict(self) -> dict[str, Any]:
        return {name: p.state_dict() for name, p in self.precisions.items()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        _same_names("precision", state, self.precisions)
        for name, p in self.precisions.items():
            p.load_state_dict(state[name])


class ScheduleSet(Schedule):
    """The schedules of several optimizers (per step: each after its own optimizer stepped)."""

    def __init__(self, schedules: dict[str, Schedule], interval: str) -> None:
        super().__init__(None, interval)
        self.schedules = schedules

    def epoch_end(self, record: dict[str, Any], monitor: str) -> None:
        for schedule in self.schedules.values():
            schedule.epoch_end(record, monitor)

    def state_dict(self) -> dict[str, Any]:
        return {name: s.state_dict() for name, s in self.schedules.items()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        for name, s in self.schedules.items():
            s.load_state_dict(state.get(name, {}))


def _same_names(what: str, state: Mapping[str, Any], own: Mapping[str, Any]) -> None:
    if set(state) != set(own):
        raise KeyError(f"the checkpoint has {what}s {', '.join(map(str, state))}, this run "
                       f"{', '.join(own)}")


class Optimize:
    """``optimize(name, loss)``: one optimizer's whole step, in the order the module doc gives."""

    def __init__(self, optimizers: OptimizerSet, precision: PrecisionSet, schedule: ScheduleSet,
                 clip: float | None) -> None:
        self.optimizers, self.precision, self.schedule, self.clip = (
            optimizers.optimizers, precision, schedule, clip)
        self.params = {name: [p for g in opt.param_groups for p in g["params"]]
                       for name, opt in self.optimizers.items()}
        # Backward outside autocast, as PyTorch recommends (the step runs inside it).
        self._outside: Callable[[], ContextManager[Any]] = (
            contextlib.nullcontext if precision.name == "32"
            else lambda: torch.autocast(precision.device.type, enabled=False))
        self.losses: list[torch.Tensor] = []
        self.stepped = False

    def __call__(self, name: str, loss: torch.Tensor) -> bool:
        """Step optimizer ``name`` on ``loss``; return whether its parameters were updated."""
        opt = self.optimizers.get(name)
        if opt is None:
            raise TrainwellError(f"optimize({name!r}, loss): no optimizer is named {name!r}; the "
                                 f"optimizers are {', '.join(self.optimizers)}")
        precision = self.precision.precisions[name]
        # Zero first: another loss of this step may have reached these parameters.
        opt.zero_grad(set_to_none=True)
        with self._outside():
            precision.backward(loss)
        # Unscale before clipping: a scaled gradient would be clipped at the wrong norm.
        precision.unscale(opt)
        if self.clip is not None:
            torch.nn.utils.clip_grad_norm_(self.params[name], self.clip)
        stepped = precision.step(opt)
        schedule = self.schedule.schedules.get(name)
        if stepped and schedule is not None and schedule.per_step:
            schedule.step_end()  # only after a real step of its own optimizer
        opt.zero_grad(set_to_none=True)
        self.losses.append(loss.detach())
        self.stepped = self.stepped or stepped
        return stepped


class SeveralStepRunner(StepRunner):
    """The micro-step of a several-optimizer run: the user's step calls ``optimize``.

    Validation needs ``eval_step=``: the training step updates parameters.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.eval_fn is self.step_fn:
            self.eval_fn = None
        self.optimize = Optimize(self.optimizer, self.precision, self.schedule, self.clip)

    def loss(self, batch: Any) -> torch.Tensor:
        """Run the step (its optimizers step inside it); its "loss", else the sum of the
        losses it optimized."""
        optimize = self.optimize
        optimize.losses.clear()
        with self.precision.autocast():
            out = self.step_fn(self.model, batch, optimize)
        if not optimize.losses:
            raise TrainwellError("step= called optimize(name, loss) for no optimizer; call it "
                                 f"once per optimizer ({', '.join(optimize.optimizers)})")
        self.extras = extras_of(out)
        if isinstance(out, Mapping) and "loss" in out:
            return step_result(out, "step=")[0]
        return torch.stack([v.float() for v in optimize.losses]).sum()

    def micro(self, batch: Any, divisor: int) -> torch.Tensor | None:
        return self.loss(batch).detach()

    def evaluate(self, batch: Any, metrics: bool) -> tuple[torch.Tensor, Any, Any]:
        if self.eval_fn is None:
            raise TrainwellError("evaluation with several optimizers needs eval_step=callable("
                                 "model, batch) returning the loss (or a dict with 'loss'): the "
                                 "training step updates the parameters")
        return super().evaluate(batch, metrics)

    def optimizer_step(self) -> bool:
        """Each optimizer already stepped inside the step; clear what its losses left behind."""
        self.optimizer.zero_grad(set_to_none=True)
        stepped, self.optimize.stepped = self.optimize.stepped, False
        return stepped

