"""Analytic mode: memory for training from a parameter count (and, optionally, a transformer shape).

Pure Python: no torch import, so ``trainwell memory --params 7B`` starts instantly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from trainwell.errors import TrainwellError
from trainwell.memory.activations import TransformerShape, activation_terms, checkpointed_bytes
from trainwell.memory.optimizers import OptimizerSpec, get_optimizer
from trainwell.memory.precision import Precision, get_precision
from trainwell.memory.report import MemoryReport, build_report, resolve_sharding
from trainwell.memory.units import format_count, parse_count
from trainwell.memory.whatif import analytic_what_ifs, check_what_if_settings


@dataclass(frozen=True)
class Inputs:
    """Everything one analytic estimate depends on (the what-ifs vary one field at a time)."""

    params: int
    trainable: int
    optimizer: OptimizerSpec
    precision: Precision
    shape: TransformerShape | None  # hidden/layers known
    has_batch: bool  # batch and seq known too: activations can be computed
    gpus: int = 1
    stage: int = 0
    checkpointing: bool = False


def compute(inputs: Inputs) -> MemoryReport:
    """The rows for one set of inputs, sharded per GPU (no what-ifs)."""
    precision, spec = inputs.precision, inputs.optimizer
    trainable = inputs.trainable
    notes: list[str] = []
    state = _state_bytes(spec, precision, inputs.shape, trainable, notes)
    activations, terms = None, {}
    if inputs.shape is not None and inputs.has_batch:
        terms = activation_terms(inputs.shape, precision)
        activations = checkpointed_bytes(inputs.shape, precision) if inputs.checkpointing else sum(terms.values())
    return build_report(
        weights=inputs.params * precision.weight_bytes, buffers=0, gradients=trainable * precision.grad_bytes,
        state=state, master=trainable * precision.master_bytes, activations=activations,
        gpus=inputs.gpus, stage=inputs.stage, mode="estimate", optimizer=spec.name, precision=precision.name,
        params=inputs.params, trainable_params=trainable, frozen_params=inputs.params - trainable,
        activation_terms=terms, notes=notes)


def _state_bytes(spec: OptimizerSpec, precision: Precision, shape: TransformerShape | None,
                 trainable: int, notes: list[str]) -> int:
    if spec.layout == "dense":
        return trainable * spec.copies * precision.state_bytes
    if shape is not None:  # factored and 8-bit state depend on tensor shapes: take them from the model shape
        shapes = shape.parameter_shapes()
        numel = sum(math.prod(s) for s in shapes)
        per_param = sum(spec.state_bytes(s, precision.state_bytes) for s in shapes) / numel
    else:
        per_param = spec.bytes_per_parameter(precision.state_bytes)
        if spec.layout == "factored":
            notes.append("Adafactor state assumes square 4096-wide matrices; "
                         "give --hidden and --layers for the real shapes")
    return round(trainable * per_param)


def estimate_memory(params: int | str | None = None, optimizer: str = "adamw", precision: str = "32", *,
                    batch: int | None = None, seq: int | None = None, hidden: int | None = None,
                    layers: int | None = None, heads: int | None = None, vocab: int | None = None,
                    ffn: int | None = None, dropout: bool = True, attention: str = "eager", gpus: int = 1,
                    stage: int | None = None, freeze: int | str | None = None, accumulate: int = 4, lora_rank: int = 16,
                    what_if_gpus: int = 8) -> MemoryReport:
    """Estimate the memory of one training step from a parameter count and an optional transformer shape.

    Args:
        params: parameter count (``7_000_000_000`` or ``"7B"``); derived from the shape when omitted.
        optimizer: one of ``trainwell.memory.optimizers.OPTIMIZERS``.
        precision: ``32``, ``bf16-mixed``, ``16-mixed``, ``bf16-true``, ``16-true``, ``bf16-master``, ``16-master``.
        batch, seq, hidden, layers, heads, vocab, ffn: the transformer and micro-batch shape (per GPU);
            activations are included only when batch, seq, hidden and layers are all given.
        dropout, attention: dropout masks kept or not; ``"eager"`` or ``"flash"`` attention.
        gpus, stage: shard over ``gpus`` at ZeRO ``stage`` (default 3 = FSDP FULL_SHARD when gpus > 1).
        freeze: for the what-if: how many parameters to freeze.
        accumulate, lora_rank, what_if_gpus: the settings of the what-if rows.

    Example:
        >>> estimate_memory("1B", "adamw", "32").total_bytes
        16000000000
    """
    spec, prec = get_optimizer(optimizer), get_precision(precision)
    check_what_if_settings(accumulate, lora_rank, what_if_gpus)
    shape = _shape(batch, seq, hidden, layers, heads, vocab, ffn, dropout, attention)
    notes: list[str] = []
    if params is None:
        if shape is None:
            raise TrainwellError("give the parameter count (--params 7B) or a model (--model pkg.module:factory)")
        count = sum(math.prod(s) for s in shape.parameter_shapes())
        notes.append(f"parameter count {format_count(count)} derived from the shape "
                     "(tied embedding, no positional table)")
    else:
        count = parse_count(params)
    if count <= 0:
        raise TrainwellError(f"--params must be positive, got {params!r}")
    gpus, stage = resolve_sharding(gpus, stage)
    has_batch = batch is not None and seq is not None
    inputs = Inputs(count, count, spec, prec, shape, has_batch and shape is not None, gpus, stage)
    report = compute(inputs)
    report.notes = notes + report.notes + _notes(inputs)
    frozen = parse_count(freeze, "--freeze (a count here; name prefixes need --model)") if freeze is not None else None
    if frozen is not None and frozen > count:
        raise TrainwellError(f"--freeze {freeze} is more than the {format_count(count)} parameters")
    report.what_if = analytic_what_ifs(inputs, report, compute, frozen=frozen, accumulate=accumulate,
                                       lora_rank=lora_rank, what_if_gpus=what_if_gpus)
    return report


def _shape(batch, seq, hidden, layers, heads, vocab, ffn, dropout, attention) -> TransformerShape | None:
    if (batch is not None or seq is not None) and (hidden is None or layers is None):
        raise TrainwellError("activations need the model shape too: give --hidden and --layers with --batch and --seq")
    if hidden is None and layers is None:
        return None
    if hidden is None or layers is None:
        raise TrainwellError(f"give both --hidden and --layers (missing --{'hidden' if hidden is None else 'layers'})")
    if (batch is None) != (seq is None):
        missing = "batch" if batch is None else "seq"
        raise TrainwellError(f"activations need both --batch and --seq (missing --{missing})")
    if hidden <= 0:
        raise TrainwellError(f"--hidden must be a positive integer, got {hidden}")
    if heads is None:  # the common head width of 64 channels, when it divides the width
        heads = hidden // 64 if hidden % 64 == 0 else 1
    return TransformerShape(batch if batch is not None else 1, seq if seq is not None else 1, hidden, layers, heads,
                            ffn if ffn is not None else 4 * hidden, vocab, dropout, attention)


def _notes(inputs: Inputs) -> list[str]:
    notes = []
    if inputs.shape is not None and inputs.shape.heads == 1 and inputs.shape.hidden % 64:
        notes.append("one attention head assumed (--hidden is not a multiple of 64); give --heads")
    if inputs.has_batch:
        notes.append("attention: " + ("eager, softmax(QK^T)V as written, keeping the s*s "
                                      "probabilities for backward (the default; --attention flash "
                                      "for SDPA/FlashAttention)" if inputs.shape.attention == "eager"
                                      else "flash (fused SDPA/FlashAttention kernels: no s*s terms)"))
    if not inputs.has_batch:
        notes.append("activations are NOT included: give --batch, --seq, --hidden and --layers to add them")
    if inputs.precision.autocast:
        notes.append("autocast keeps fp32 weights: they are the master copy (no separate one); "
                     "half copies of matmul weights live from forward to backward (counted in activations)")
    if inputs.optimizer.layout == "8bit":
        notes.append("8-bit state as bitsandbytes: 2 B/param + fp32 absmax per 2048-element block; "
                     "tensors < 4096 elements keep fp32 state")
    if inputs.optimizer.step_counter_bytes:
        notes.append("torch's 4-byte 'step' counter per parameter tensor is not counted")
    notes.append("not counted: CUDA context (~0.3-1 GiB), cuBLAS/cuDNN workspaces, allocator fragmentation, "
                 "temporaries inside kernels and the optimizer step")
    return notes

