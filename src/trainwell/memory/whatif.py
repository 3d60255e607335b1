"""The "what if" rows: the total per GPU under one change each, and what it saves.

Each change and how it is computed (analytic mode / model mode):

- bf16 autocast: re-estimated with ``bf16-mixed`` / re-measured under autocast
  (on CPU, autocast runs softmax in bf16 where CUDA keeps fp32).
- flash attention: the LLM shape with ``attention="flash"`` (the fused
  ``F.scaled_dot_product_attention`` kernels keep no s*s attention matrix),
  when the estimate used eager attention (analytic mode).
- gradient accumulation over k micro-batches: activations of a batch / k
  (analytic: exact for the formula; model mode: measured activations / k,
  which assumes every saved tensor scales with the batch).
- activation checkpointing per block: keep each block's input, recompute one
  block at a time in backward (one extra forward of the blocks: about +33%
  compute for a step whose backward costs twice its forward).
- freezing: no gradients, optimizer state or master weights for the frozen part.
- LoRA of rank r on the linear layers: r*(in+out) new trainable parameters per
  adapted linear, every base parameter frozen; activations assumed unchanged
  (the adapter needs the same input the base layer saved, plus an r-wide one).
- 8-bit optimizer: bitsandbytes block-wise 8-bit AdamW state.
- FSDP FULL_SHARD (ZeRO-3) over N GPUs: weights, gradients, state and master
  weights divided by N; activations are not sharded.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable

from trainwell.errors import TrainwellError
from trainwell.memory.optimizers import get_optimizer
from trainwell.memory.precision import get_precision
from trainwell.memory.report import MemoryReport, WhatIf, saving

CHECKPOINT_COST = "recompute: one extra forward of each block, about +33% step compute"


def check_what_if_settings(accumulate: int, lora_rank: int, what_if_gpus: int) -> None:
    """Reject settings no what-if can use."""
    for flag, value in (("--accumulate", accumulate), ("--lora-rank", lora_rank), ("--what-if-gpus", what_if_gpus)):
        if value < 1:
            raise TrainwellError(f"{flag} must be at least 1, got {value}")


def lora_parameters(linear_shapes: list[tuple[int, int]], rank: int) -> int:
    """Trainable parameters LoRA adds: ``rank * (in + out)`` per adapted linear layer."""
    return sum(rank * (out_features + in_features) for out_features, in_features in linear_shapes)


def analytic_what_ifs(inputs: Any, baseline: MemoryReport, compute: Callable[[Any], MemoryReport], *,
                      frozen: int | None, accumulate: int, lora_rank: int, what_if_gpus: int) -> list[WhatIf]:
    """What-if rows for the analytic mode: each one re-runs ``compute`` on changed inputs."""
    rows: list[WhatIf] = []

    def add(name: str, changed: Any, note: str = "") -> None:
        rows.append(saving(name, baseline, compute(changed).total_bytes, note))

    if inputs.precision.activations == "fp32":
        add("bf16 autocast", replace(inputs, precision=get_precision("bf16-mixed")),
            "saves activation memory only: autocast keeps fp32 weights, gradients and state")
    shape = inputs.shape
    if inputs.has_batch and shape.attention == "eager":
        add("flash attention (SDPA)", replace(inputs, shape=replace(shape, attention="flash")),
            "--attention flash: F.scaled_dot_product_attention's fused kernels keep no s*s "
            "attention matrix")
    if inputs.has_batch and shape.batch >= accumulate > 1:
        micro = -(-shape.batch // accumulate)
        add(f"gradient accumulation x{accumulate}", replace(inputs, shape=replace(shape, batch=micro)),
            f"micro-batch {micro} instead of {shape.batch}, same effective batch")
    if inputs.has_batch and not inputs.checkpointing:
        add("activation checkpointing", replace(inputs, checkpointing=True), CHECKPOINT_COST)
    if frozen:
        add(f"freeze {frozen:,} parameters", replace(inputs, trainable=inputs.trainable - frozen))
    if shape is not None:
        extra = lora_parameters(shape.linear_shapes(), lora_rank)
        add(f"LoRA rank {lora_rank}", replace(inputs, params=inputs.params + extra, trainable=extra),
            f"{extra:,} adapter parameters on {len(shape.linear_shapes())} linear layers, base frozen")
    if inputs.optimizer.layout != "8bit":
        add("8-bit AdamW (bitsandbytes)", replace(inputs, optimizer=get_optimizer("adamw8bit")),
            f"instead of {inputs.optimizer.name}")
    if what_if_gpus > 1 and not (inputs.stage == 3 and inputs.gpus >= what_if_gpus):
        add(f"FSDP over {what_if_gpus} GPUs", replace(inputs, gpus=what_if_gpus, stage=3),
            "FULL_SHARD: weights, gradients, state sharded; activations not; per-GPU total")
    return rows
