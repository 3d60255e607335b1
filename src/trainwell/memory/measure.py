"""Model mode: run one real training step on a sample batch and count what it keeps.

Counted exactly, as ``numel * element_size`` of real tensors: parameters
(trainable and frozen), buffers, gradients after ``backward()``, and the
optimizer's state after one real ``optimizer.step()``. Activations are the
bytes autograd saves for backward (see ``saved.py``). The step runs with
``lr=0`` and everything the step touches (gradients, buffers, train mode,
``requires_grad``) is restored, so the model comes back unchanged.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from trainwell.errors import TrainwellError
from trainwell.memory.optimizers import OptimizerSpec, get_optimizer
from trainwell.memory.precision import Precision, get_precision
from trainwell.memory.report import LayerUsage, MemoryReport, build_report, resolve_sharding
from trainwell.memory.saved import SavedTensorCounter
from trainwell.memory.whatif import check_what_if_settings

HALF = {"bf16": torch.bfloat16, "fp16": torch.float16}
LossFn = Callable[[Any, Any], torch.Tensor]


@dataclass
class Measured:
    """Raw (unsharded) counts of one step, per parameter where the what-ifs need it."""

    model: nn.Module
    named: list[tuple[str, nn.Parameter]]
    grads: dict[int, int]  # id(param) -> gradient bytes
    state: dict[int, int]  # id(param) -> optimizer state bytes
    weights: int
    buffers: int
    counter: SavedTensorCounter
    rerun: Callable[..., SavedTensorCounter]  # rerun(autocast_dtype=None) -> a fresh count of one forward

    @property
    def activations(self) -> int:
        return self.counter.total_bytes


def _nbytes(tensor: torch.Tensor) -> int:
    return tensor.numel() * tensor.element_size()


def call_model(model: nn.Module, sample: Any) -> Any:
    """A tensor is the one argument; a tuple/list are positional arguments; a dict keyword arguments."""
    if isinstance(sample, dict):
        return model(**sample)
    if isinstance(sample, (tuple, list)):
        return model(*sample)
    return model(sample)


def _floating(output: Any) -> Iterator[torch.Tensor]:
    if isinstance(output, torch.Tensor):
        if output.is_floating_point() and output.requires_grad:
            yield output
    elif isinstance(output, dict):
        for value in output.values():
            yield from _floating(value)
    elif isinstance(output, (tuple, list)):
        for value in output:
            yield from _floating(value)


def _loss(output: Any, sample: Any, loss_fn: LossFn | None) -> torch.Tensor:
    if loss_fn is None:  # sum of every output that requires grad: saves nothing extra for backward
        tensors = list(_floating(output))
        if not tensors:
            raise TrainwellError("the model's output has no floating tensor that requires grad, so there is "
                                 "nothing to backpropagate; give a loss (--loss MODULE:FUNCTION)")
        return sum((t.float().sum() for t in tensors), torch.zeros((), device=tensors[0].device))
    try:
        loss = loss_fn(output, sample)
    except Exception as error:
        raise TrainwellError(f"the loss function raised {type(error).__name__}: {error}") from None
    if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
        raise TrainwellError(f"the loss function must return a one-element tensor, got {type(loss).__name__}")
    return loss


def forward_backward(model: nn.Module, sample: Any, loss_fn: LossFn | None,
                     autocast_dtype: torch.dtype | None = None) -> SavedTensorCounter:
    """One forward (counted) and one backward; gradients are left in ``.grad``."""
    autocast = torch.autocast(_device(model), dtype=autocast_dtype) if autocast_dtype else nullcontext()
    with SavedTensorCounter(model) as counter:
        with autocast:
            try:
                output = call_model(model, sample)
            except TrainwellError:
                raise
            except Exception as error:
                message = str(error).splitlines()[0] if str(error) else ""
                raise TrainwellError(f"the model's forward raised {type(error).__name__} on the sample "
                                     f"({_describe(sample)}): {message}") from None
            loss = _loss(output, sample, loss_fn)
    try:
        loss.backward()
    except RuntimeError as error:
        message = str(error).splitlines()[0] if str(error) else ""
        raise TrainwellError(f"backward failed: {message}") from None
    return counter


def _describe(sample: Any) -> str:
    if isinstance(sample, torch.Tensor):
        return f"tensor {tuple(sample.shape)} {str(sample.dtype).replace('torch.', '')}"
    if isinstance(sample, dict):
        return "dict " + ", ".join(f"{k}: {_describe(v)}" for k, v in sample.items())
    if isinstance(sample, (tuple, list)):
        return "(" + ", ".join(_describe(v) for v in sample) + ")"
    return type(sample).__name__


@contextmanager
def _preserved(model: nn.Module) -> Iterator[None]:
    """Restore train mode, requires_grad, .grad and buffers after the measurement."""
    training = model.training
    params = list(model.parameters())
    flags = [p.requires_grad for p in params]
    grads = [p.grad for p in params]
    buffers = [(b, b.detach().clone()) for b in model.buffers()]
    for p in params:
        p.grad = None
    try:
        yield
    finally:
        model.train(training)
        for p, flag, grad in zip(params, flags, grads):
            p.requires_grad_(flag)
            p.grad = grad
        with torch.no_grad():
            for buffer, saved in buffers:
                buffer.copy_(saved)


def optimizer_state(named: Sequence[tuple[str, nn.Parameter]], spec: OptimizerSpec) -> dict[int, int]:
    """State bytes per parameter after one real step (lr=0), or from bitsandbytes' layout for 8-bit."""
    trainable = [p for _, p in named if p.requires_grad]
    if not trainable:
        return {}
    if spec.factory is not None:
        try:
            optimizer = spec.factory(trainable)
        except Exception as error:
            raise TrainwellError(f"building the optimizer {spec.name} raised {type(error).__name__}: {error}") from None
        for group in optimizer.param_groups:  # lr=0: the step allocates the state but changes no weight
            if isinstance(group.get("lr"), torch.Tensor):
                group["lr"].fill_(0.0)
            elif "lr" in group:
                group["lr"] = 0.0
    elif spec.torch_class is None:  # bitsandbytes is CUDA-only: use its layout (see optimizers.py)
        return {id(p): spec.state_bytes(tuple(p.shape), 4) for p in trainable if p.grad is not None}
    else:
        optimizer = getattr(torch.optim, spec.torch_class)(trainable, lr=0.0, **spec.torch_kwargs)
    optimizer.step()
    state = {id(p): sum(_nbytes(v) for v in optimizer.state[p].values() if isinstance(v, torch.Tensor))
             for p in trainable if p in optimizer.state}
    optimizer.state.clear()
    return state


def resolve_optimizer(optimizer: Any) -> OptimizerSpec:
    """A name, a ``torch.optim.Optimizer`` class or instance (its class and defaults), or ``f(params)``."""
    if isinstance(optimizer, str):
        return get_optimizer(optimizer)
    if isinstance(optimizer, torch.optim.Optimizer):
        cls = type(optimizer)
        accepted = inspect.signature(cls.__init__).parameters
        defaults = {k: v for k, v in optimizer.defaults.items() if k in accepted}  # some defaults are not arguments
        return OptimizerSpec(cls.__name__, "your optimizer", "measured", factory=lambda params: cls(params, **defaults))
    if callable(optimizer):
        name = getattr(optimizer, "__name__", type(optimizer).__name__)
        return OptimizerSpec(name, "your optimizer", "measured", factory=optimizer)
    raise TrainwellError(f"optimizer must be a name, an Optimizer class or instance, or a function; got "
                         f"{type(optimizer).__name__}")


def measure_memory(model: nn.Module, sample: Any, optimizer: Any = "adamw", *, loss_fn: LossFn | None = None,
                   precision: str = "32", freeze: str | Sequence[str] = (), gpus: int = 1, stage: int | None = None,
                   accumulate: int = 4, lora_rank: int = 16, what_if_gpus: int = 8, top: int = 5,
                   what_if: bool = True) -> MemoryReport:
    """Run one training step of ``model`` on ``sample`` and count its memory exactly.

    Args:
        model: the ``nn.Module`` (on CPU, or where it lives); it comes back unchanged.
        sample: one batch: a tensor (``model(x)``), a tuple/list (``model(*x)``) or a dict (``model(**x)``).
        optimizer: a name from ``trainwell.memory.optimizers.OPTIMIZERS``, a ``torch.optim.Optimizer``
            class or instance (rebuilt with its defaults), or ``f(params) -> Optimizer``; stepped once, lr=0.
        loss_fn: ``loss_fn(output, sample) -> scalar``; default: the sum of all outputs.
        precision: ``32``, ``bf16-mixed``/``16-mixed`` (autocast) or ``bf16-true``/``16-true`` (a half copy).
        freeze: parameter-name prefixes for the "freeze" what-if.
        gpus, stage: shard over ``gpus`` at ZeRO ``stage`` (default 3 when gpus > 1).
        accumulate, lora_rank, what_if_gpus: the settings of the what-if rows.
        top: how many modules to list by activation memory.
        what_if: compute the what-if rows (two of them run one more forward and backward each).

    Example:
        >>> report = measure_memory(nn.Linear(4, 2), torch.randn(8, 4), "sgd")
        >>> report.weights_bytes
        40
    """
    from trainwell.memory.measure_whatif import model_what_ifs

    spec, prec = resolve_optimizer(optimizer), get_precision(precision)
    if prec.master_bytes:
        raise TrainwellError(f"precision {prec.name} (a separate fp32 master copy, as DeepSpeed/Megatron) is "
                             "analytic-only; measure with 32, bf16-mixed, 16-mixed, bf16-true or 16-true")
    if not isinstance(model, nn.Module):
        raise TrainwellError(f"expected an nn.Module to measure, got {type(model).__name__}")
    gpus, stage = resolve_sharding(gpus, stage)
    check_what_if_settings(accumulate, lora_rank, what_if_gpus)
    freeze = (freeze,) if isinstance(freeze, str) else tuple(freeze)
    autocast = HALF[prec.half_name] if prec.autocast else None
    if prec.activations == "half":  # a half copy, so the user's fp32 weights are not rounded
        model = copy.deepcopy(model).to(HALF[prec.half_name])
        sample = _cast(sample, HALF[prec.half_name])
    with _preserved(model):
        model.train()
        counter = forward_backward(model, sample, loss_fn, autocast)
        named = list(model.named_parameters())
        measured = Measured(
            model=model, named=named,
            grads={id(p): _nbytes(p.grad) for _, p in named if p.grad is not None},
            state=optimizer_state(named, spec),
            weights=sum(_nbytes(p) for _, p in named), buffers=sum(_nbytes(b) for b in model.buffers()),
            counter=counter, rerun=lambda dtype=autocast: forward_backward(model, sample, loss_fn, dtype))
        trainable = sum(p.numel() for _, p in named if p.requires_grad)
        report = build_report(
            weights=measured.weights, buffers=measured.buffers, gradients=sum(measured.grads.values()),
            state=sum(measured.state.values()), master=0, activations=measured.activations, gpus=gpus, stage=stage,
            mode="measure", optimizer=spec.name, precision=prec.name, params=sum(p.numel() for _, p in named),
            trainable_params=trainable, frozen_params=sum(p.numel() for _, p in named) - trainable,
            top_layers=_top_layers(counter, top), notes=_notes(spec, prec, _device(model)))
        if what_if:
            report.what_if = model_what_ifs(measured, report, spec, prec, freeze=freeze, accumulate=accumulate,
                                            lora_rank=lora_rank, what_if_gpus=what_if_gpus)
    return report


def _cast(sample: Any, dtype: torch.dtype) -> Any:
    if isinstance(sample, torch.Tensor):
        return sample.to(dtype) if sample.is_floating_point() else sample
    if isinstance(sample, dict):
        return {k: _cast(v, dtype) for k, v in sample.items()}
    if isinstance(sample, (tuple, list)):
        return type(sample)(_cast(v, dtype) for v in sample)
    return sample


def _top_layers(counter: SavedTensorCounter, top: int) -> list[LayerUsage]:
    ranked = sorted(counter.by_module.items(), key=lambda item: -item[1])[:top]
    return [LayerUsage(name, counter.types.get(name, ""), nbytes) for name, nbytes in ranked if nbytes]


def _device(model: nn.Module) -> str:
    return next((p.device.type for p in model.parameters()), "cpu")


def _notes(spec: OptimizerSpec, prec: Precision, device: str) -> list[str]:
    notes = ["activations: bytes autograd saved for backward in one forward, one count per storage; "
             "parameters and buffers left out"]
    if spec.layout == "8bit":
        notes.append("8-bit state computed with bitsandbytes' block-wise layout (block 2048), not measured")
    if prec.autocast and device == "cpu":
        notes.append("measured under CPU autocast, which runs softmax in half; CUDA autocast keeps it fp32 (more)")
    notes.append("not counted: CUDA context, cuBLAS/cuDNN workspaces, allocator fragmentation, temporaries")
    return notes
