"""Evaluation and prediction: ``model.eval()`` + ``inference_mode``, then train mode back.

Metrics are weighted by batch size and summed on the device; the host reads
them once, at the end.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import torch
from torch import nn

from trainwell.errors import TrainwellError
from trainwell.fit.data import batch_size_of, move_to
from trainwell.fit.step import StepRunner


def accuracy(outputs: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Share of rows whose arg-max class equals the target (class indices or one-hot)."""
    if target.dim() == outputs.dim():
        target = target.argmax(-1)
    return (outputs.argmax(-1) == target).mean(dtype=torch.float32)  # the cast inside the mean


BUILTIN_METRICS: dict[str, Callable[[Any, Any], torch.Tensor]] = {"accuracy": accuracy}


def resolve_metrics(metrics: Any) -> dict[str, Any]:
    """Normalize ``metrics`` (dict name -> callable/metric/"accuracy", or a list of names)."""
    if metrics is None:
        return {}
    if isinstance(metrics, str):
        metrics = [metrics]
    if not isinstance(metrics, Mapping):
        metrics = {name: name for name in metrics}
    out: dict[str, Any] = {}
    for name, metric in metrics.items():
        if isinstance(metric, str):
            if metric not in BUILTIN_METRICS:
                raise TrainwellError(
                    f"metric {name!r}: {metric!r} is not a built-in metric; built-ins are "
                    f"{', '.join(BUILTIN_METRICS)}, or pass a callable(outputs, targets)"
                )
            metric = BUILTIN_METRICS[metric]
        if not (callable(metric) or is_stateful(metric)):
            raise TrainwellError(
                f"metric {name!r} is a {type(metric).__name__}; pass a callable(outputs, targets) "
                "or an object with update/compute/reset (torchmetrics)"
            )
        out[name] = metric
    return out


def is_stateful(metric: Any) -> bool:
    """A torchmetrics-like metric: update(outputs, target), compute(), reset()."""
    return all(callable(getattr(metric, m, None)) for m in ("update", "compute", "reset"))


@contextlib.contextmanager
def eval_mode(model: nn.Module, inference: bool = True) -> Iterator[None]:
    """``model.eval()`` and ``inference_mode`` inside; every module's mode restored after.

    Restoring each module's own flag (not ``model.train()``) keeps a submodule
    the user deliberately put in eval mode (a frozen BatchNorm backbone) in it.
    ``inference=False`` uses ``no_grad`` instead: FSDP's first forward allocates
    its unsharded parameters, and made under ``inference_mode`` they break every
    later training forward ("Inference tensors do not track version counter").
    """
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    try:
        with torch.inference_mode() if inference else torch.no_grad():
            yield
    finally:
        for module, training in modes:
            module.training = training


def evaluate_batches(runner: StepRunner, model: nn.Module, batches: Iterable[Any],
                     metrics: dict[str, Any], device: torch.device,
                     reduce: Callable[[torch.Tensor], torch.Tensor] | None = None,
                     extra_forwards: int = 0, inference: bool = True,
                     size_of: Callable[[Any], int] = batch_size_of) -> dict[str, float]:
    """Mean loss and metrics over ``batches``, weighted by batch size.

    ``reduce`` sums a tensor over processes (DDP): each rank evaluated a shard.
    ``extra_forwards``: FSDP ranks with a shorter shard repeat their last batch,
    uncounted, so that every rank joins as many gathering forwards.
    ``inference``: see ``eval_mode``. ``size_of``: the batches' size rule (their source's).
    """
    stateful = {k: m for k, m in metrics.items() if is_stateful(m)}
    plain = {k: m for k, m in metrics.items() if k not in stateful}
    functions, updates = list(plain.values()), [m.update for m in stateful.values()]
    wants_outputs = bool(metrics)
    for m in stateful.values():
        m.reset()
    with eval_mode(model, inference):
        dtype = torch.float32 if device.type == "mps" else torch.float64  # MPS has no float64
        # One running sum per value (the loss, then each plain metric), on the device.
        loss_sum, *metric_sums = sums = [torch.zeros((), dtype=dtype, device=device)
                                         for _ in range(1 + len(plain))]
        count = 0
        batch = None
        for batch in batches:
            bs = size_of(batch)
            loss, outputs, target = runner.evaluate(batch, wants_outputs)
            # sum += value * bs in one in-place op, the cast to float64 inside it: there a
            # float32 value times a batch size is exact, so it rounds as multiply-then-add did.
            loss_sum.add_(loss, alpha=bs)
            for total, m in zip(metric_sums, functions):
                total.add_(m(outputs, target), alpha=bs)
            for update in updates:
                update(outputs, target)
            count += bs
        for _ in range(extra_forwards):
            if batch is None:
                raise TrainwellError("strategy='fsdp': a rank has no validation sample; pass at "
                                     "least as many validation samples as processes")
            runner.evaluate(batch, False)
        totals = torch.stack(sums)
        if reduce is not None:  # sums and sample counts over all ranks: the exact global mean
            both = reduce(torch.cat([totals, totals.new_tensor([count])]))
            totals, count = both[:-1], int(both[-1].item())
        if count == 0:
            raise TrainwellError("evaluation data has no batches; pass a non-empty validation set")
        means = (totals / count).tolist()  # the one host sync of the evaluation
    result = {"loss": means[0]}
    result.update(zip(plain, means[1:]))
    for name, m in stateful.items():
        result[name] = float(m.compute())
    return result


def predict_batches(runner: StepRunner, model: nn.Module, batches: Iterable[Any]) -> Any:
    """Model outputs over ``batches``, concatenated on the CPU (logits of a Hugging Face-style
    output)."""
    cpu = torch.device("cpu")
    outs = []
    with eval_mode(model):
        for batch in batches:
            outs.append(move_to(runner.predict(batch), cpu))
    if outs and all(isinstance(o, torch.Tensor) for o in outs):
        return torch.cat(outs)
    return outs
