"""One optimizer step, in the only order the Trainer can run it.

A micro-step:   forward -> loss -> loss / window size -> backward
An optimizer step, after the last micro-step of a window:
    unscale -> clip -> optimizer.step -> scheduler (per step) -> zero_grad

How a batch reaches the model, in every phase: see batch.py. ``step=`` (training),
``eval_step=`` (validation, ``evaluate``) and ``predict_step=`` replace it per phase.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from trainwell.errors import TrainwellError
from trainwell.fit.batch import Route, logits_of, loss_of_outputs, missing_target
from trainwell.fit.precision import NO_AUTOCAST, Precision
from trainwell.fit.schedule import Schedule

# Losses that compare input and target element by element, and so broadcast silently
# (a UserWarning at most) when the shapes differ: [N, 1] against [N] becomes an [N, N] grid.
_ELEMENTWISE_MODULES = (nn.MSELoss, nn.L1Loss, nn.SmoothL1Loss, nn.HuberLoss)
_ELEMENTWISE_FUNCTIONS = (F.mse_loss, F.l1_loss, F.smooth_l1_loss, F.huber_loss)


def same_shape_loss(loss_fn: Callable | None) -> Callable | None:
    """``loss_fn``, refusing input/target shapes that differ when it is an element-wise loss (TW304).

    Any other loss (cross-entropy takes [N, C] against [N] on purpose, a user's
    callable may broadcast deliberately) is returned unchanged.
    """
    if isinstance(loss_fn, _ELEMENTWISE_MODULES) or any(loss_fn is f for f in _ELEMENTWISE_FUNCTIONS):
        return _SameShape(loss_fn)
    return loss_fn


class _SameShape:
    """An element-wise loss that raises on differing shapes instead of broadcasting them."""

    def __init__(self, loss_fn: Callable) -> None:
        self.loss_fn = loss_fn
        self.name = type(loss_fn).__name__ if isinstance(loss_fn, nn.Module) else loss_fn.__name__

    def __call__(self, input: Any, target: Any) -> torch.Tensor:
        if isinstance(input, torch.Tensor) and isinstance(target, torch.Tensor) and input.shape != target.shape:
            try:
                grid = f" broadcast to {list(torch.broadcast_shapes(input.shape, target.shape))}, so"
            except RuntimeError:
                grid = ""  # not broadcastable: PyTorch's own error follows
            if grid:
                raise TrainwellError(
                    f"{self.name} got the model's output of shape {list(input.shape)} and a target of shape "
                    f"{list(target.shape)}: they{grid} every output would be compared with every target (TW304); "
                    "make them equal, e.g. a model that returns output.squeeze(-1), or targets of shape "
                    f"{list(input.shape)}")
        return self.loss_fn(input, target)


def step_result(out: Any, hook: str) -> tuple[torch.Tensor, Any, Any]:
    """(loss, outputs, target) of what a ``step=``/``eval_step=`` returned.

    A tensor is the loss; a dict holds "loss" and, for metrics, optionally
    "outputs" (or "logits") and "target" (None when absent).
    """
    if not isinstance(out, Mapping):
        return out, None, None
    if "loss" not in out:
        raise TrainwellError(f"{hook} returned a dict with keys {', '.join(map(str, out))} and no "
                             "'loss'; return the loss tensor, or a dict with 'loss'")
    outputs = out.get("outputs", out.get("logits"))
    return out["loss"], outputs, out.get("target")


def extras_of(out: Any) -> dict[str, torch.Tensor] | None:
    """The scalars a step returned besides its loss (each is logged as ``train_<name>``)."""
    if not isinstance(out, Mapping):
        return None
    found = {str(k): v.detach() if isinstance(v, torch.Tensor) else torch.tensor(float(v))
             for k, v in out.items()
             if k not in ("loss", "outputs", "logits", "target")
             and (isinstance(v, (int, float)) and not isinstance(v, bool)
                  or isinstance(v, torch.Tensor) and v.numel() == 1)}
    return found or None


class StepRunner:
    """The micro-step and the optimizer step, with the phases in fixed order.

    ``route`` is the batch rule bound to the plain model's ``forward`` (a DDP
    or compiled wrapper's signature says nothing); ``eval_fn``/``predict_fn``
    are the ``eval_step=``/``predict_step=`` hooks.
    """

    def __init__(self, forward: Callable[..., Any], loss_fn: Callable | None,
                 step_fn: Callable | None, optimizer: torch.optim.Optimizer,
                 precision: Precision, schedule: Schedule, clip_grad_norm: float | None,
                 model: nn.Module, skip_nonfinite: bool, route: Route | None = None,
                 eval_fn: Callable | None = None, predict_fn: Callable | None = None) -> None:
        self.forward_fn = forward
        self.loss_fn = same_shape_loss(loss_fn)
        self.step_fn = step_fn
        self.eval_fn = eval_fn if eval_fn is not None else step_fn
        self.predict_fn = predict_fn
        self.route = route if route is not None else Route(model, loss_fn is not None)
        self.model = model
        self.optimizer = optimizer
        self.precision = precision
        # Decided once per run: a precision whose autocast is the null context (full precision)
        # runs the forward without entering one; any other context is entered every forward.
        self._autocast = None if precision.autocast() is NO_AUTOCAST else precision.autocast
        self.schedule = schedule
        self.clip = clip_grad_norm
        self.skip_nonfinite = skip_nonfinite
        self.params = [p for g in optimizer.param_groups for p in g["params"]]
        self.extras: dict[str, torch.Tensor] | None = None  # the last step's other scalars
        self.last_loss: torch.Tensor | None = None  # held across steps, see micro()

    def outputs_and_target(self, batch: Any) -> tuple[Any, Any]:
        """Run the model on a batch; return its outputs and the batch's target."""
        kind = type(batch)
        if (kind is tuple or kind is list) and len(batch) == 2:  # (x, y): what the fast paths yield
            return self.forward_fn(batch[0]), batch[1]
        args, kwargs, target = self.route.split(batch)
        return self.forward_fn(*args, **kwargs), target

    def autocasting(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` under the precision's autocast; full precision calls it directly."""
        if self._autocast is None:
            return fn(*args)
        with self._autocast():
            return fn(*args)

    def loss(self, batch: Any) -> torch.Tensor:
        """The batch's mean loss (under the precision's autocast)."""
        return self.autocasting(self._loss, batch)

    def _loss(self, batch: Any) -> torch.Tensor:
        if self.step_fn is not None:
            out = self.step_fn(self.model, batch)
            self.extras = extras_of(out)
            return step_result(out, "step=")[0]
        outputs, target = self.outputs_and_target(batch)
        if self.loss_fn is None:
            return loss_of_outputs(outputs, batch, target)
        return self.loss_fn(logits_of(outputs), target)

    def evaluate(self, batch: Any, metrics: bool) -> tuple[torch.Tensor, Any, Any]:
        """(loss, outputs, target) of one evaluation batch; outputs/target only for ``metrics``.

        The hook's own outputs and target when it returns them; else the batch
        rule's (a second forward, after the hook's).
        """
        loss, logits, target = self.autocasting(self._evaluate, batch, metrics)
        if metrics and target is None:
            raise missing_target(batch, "metrics compare the model's output with a target")
        return loss, logits, target

    def _evaluate(self, batch: Any, metrics: bool) -> tuple[torch.Tensor, Any, Any]:
        if self.eval_fn is not None:
            hook = "eval_step=" if self.eval_fn is not self.step_fn else "step="
            loss, outputs, target = step_result(self.eval_fn(self.model, batch), hook)
            if metrics and (outputs is None or target is None):
                outputs, target = self.outputs_and_target(batch)
            return loss, logits_of(outputs), target
        outputs, target = self.outputs_and_target(batch)
        logits = logits_of(outputs)
        loss = (loss_of_outputs(outputs, batch, target) if self.loss_fn is None
                else self.loss_fn(logits, target))
        return loss, logits, target

    def predict(self, batch: Any) -> Any:
        """The model's output for one batch (a Hugging Face-style output: its logits)."""
        return self.autocasting(self._predict, batch)

    def _predict(self, batch: Any) -> Any:
        if self.predict_fn is not None:
            return self.predict_fn(self.model, batch)
        args, kwargs = self.route.inputs(batch)
        return logits_of(self.forward_fn(*args, **kwargs))

    def micro(self, batch: Any, divisor: int) -> torch.Tensor | None:
        """Forward and backward one micro-batch; return its detached loss.

        Returns None when the loss is not finite and the policy is "skip" (the
        batch adds no gradient). Under "raise" nothing is read here: the loss
        is checked on the host at the next log interval, never per step.
        """
        loss = self.loss(batch)
        if self.skip_nonfinite and not self.finite(loss):  # a sync, "skip" policy only
            return None
        # Divide by the window's real size so the summed gradient is the mean.
        self.precision.backward(loss / divisor if divisor != 1 else loss)
        # Hold the loss until the next micro-step, as a hand-written loop holds `loss`. Backward
        # freed its graph's saved tensors; what stays are the nodes, and the AccumulateGrad ones
        # hold a C++ reference to each parameter. Dropped here, every use of a parameter in the
        # optimizer step and in validation would hand its Python object over to C++ and back
        # (a GIL round trip each), and the next forward would build those nodes again: ~46k
        # instructions per step on the digits MLP (callgrind).
        self.last_loss = loss
        return loss.detach()

    def release(self) -> None:
        """Drop the loss held across steps (see ``micro``): the run is over."""
        self.last_loss = None

    def finite(self, loss: torch.Tensor) -> bool:
        """Whether to keep this micro-batch: its loss is finite (reads it on the host)."""
        return bool(torch.isfinite(loss))

    def optimizer_step(self) -> bool:
        """Apply the accumulated gradient; return whether parameters were updated."""
        optimizer = self.optimizer
        # Unscale first: clipping a scaled gradient would clip at the wrong norm.
        self.precision.unscale(optimizer)
        if self.clip is not None:
            # Clip after backward and unscale, before the step that uses the gradient.
            torch.nn.utils.clip_grad_norm_(self.params, self.clip)
        stepped = self.precision.step(optimizer)
        # The scheduler follows the optimizer, and only when it really stepped.
        if stepped and self.schedule.per_step:
            self.schedule.step_end()
        # Zero last, with set_to_none: the next window starts from no gradient.
        optimizer.zero_grad(set_to_none=True)
        return stepped
