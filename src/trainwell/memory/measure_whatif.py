"""The what-if rows of model mode, from the counts of one measured step.

Re-measured (one more forward and backward): bf16 autocast and freezing.
Computed from the measured counts: gradient accumulation (activations / k),
checkpointing (from per-block counts), LoRA, 8-bit state, FSDP. See
``whatif.py`` for what each row assumes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import torch
from torch import nn

from trainwell.errors import TrainwellError
from trainwell.memory.optimizers import OptimizerSpec, get_optimizer
from trainwell.memory.precision import Precision
from trainwell.memory.report import MemoryReport, WhatIf, build_report, saving
from trainwell.memory.saved import SavedTensorCounter
from trainwell.memory.whatif import CHECKPOINT_COST

if TYPE_CHECKING:
    from trainwell.memory.measure import Measured


def model_what_ifs(m: Measured, baseline: MemoryReport, spec: OptimizerSpec, prec: Precision, *, freeze: Sequence[str],
                   accumulate: int, lora_rank: int, what_if_gpus: int) -> list[WhatIf]:
    """One row per change; ``m`` is the ``Measured`` step of ``measure.py``."""
    raw = {"weights": m.weights, "buffers": m.buffers, "gradients": sum(m.grads.values()),
           "state": sum(m.state.values()), "master": 0, "activations": m.activations}

    def total(gpus: int | None = None, **changes: int) -> int:
        sharded_gpus, stage = (gpus, 3) if gpus else (baseline.gpus, baseline.stage)
        return build_report(**{**raw, **changes}, gpus=sharded_gpus, stage=stage, mode="", optimizer="",
                            precision="", params=0, trainable_params=0, frozen_params=0).total_bytes

    rows: list[WhatIf] = []
    if prec.name == "32":
        counted = m.rerun(torch.bfloat16)
        rows.append(saving("bf16 autocast", baseline, total(activations=counted.total_bytes),
                           "re-measured under autocast; weights, gradients and state stay fp32"))
    if accumulate > 1:
        rows.append(saving(f"gradient accumulation x{accumulate}", baseline,
                           total(activations=m.activations // accumulate),
                           "activations / k: assumes every saved tensor scales with the batch"))
    checkpointed = _checkpointed(m.model, m.counter)
    if checkpointed is not None:
        rows.append(saving("activation checkpointing", baseline, total(activations=checkpointed[0]),
                           f"per block of {checkpointed[1]}; {CHECKPOINT_COST}"))
    if freeze:
        rows.append(_freeze(m, baseline, freeze, total))
    lora = _lora(m, spec, lora_rank, baseline.trainable_params)
    if lora is not None:
        rows.append(saving(f"LoRA rank {lora_rank}", baseline, total(**lora[0]), lora[1]))
    if spec.layout != "8bit":
        eight = get_optimizer("adamw8bit")
        state = sum(eight.state_bytes(tuple(p.shape), 4) for _, p in m.named if id(p) in m.grads and p.requires_grad)
        rows.append(saving("8-bit AdamW (bitsandbytes)", baseline, total(state=state), f"instead of {spec.name}"))
    if what_if_gpus > 1 and not (baseline.stage == 3 and baseline.gpus >= what_if_gpus):
        rows.append(saving(f"FSDP over {what_if_gpus} GPUs", baseline, total(gpus=what_if_gpus),
                           "FULL_SHARD: weights, gradients, state sharded; activations not; per-GPU total"))
    return rows


def _checkpointed(model: nn.Module, counter: SavedTensorCounter) -> tuple[int, str] | None:
    """Keep each block's input, recompute one block at a time: for the list of blocks that saves most."""
    best: tuple[bool, int, list[str], str] | None = None
    for name, module in model.named_modules():
        if isinstance(module, (nn.ModuleList, nn.Sequential)) and len(module) >= 2:
            children = [f"{name}.{child}" if name else child for child, _ in module.named_children()]
            inside = sum(_under(counter, child) for child in children)
            composite = all(any(True for _ in child.children()) for child in module.children())
            candidate = (composite, inside, children, name or "the model")
            if best is None or candidate[:2] > best[:2]:
                best = candidate
    if best is None or not best[0] or best[1] == 0:
        return None  # no list of composite blocks: checkpointing single layers saves nothing
    _, inside, children, where = best
    kept = sum(counter.input_bytes.get(child, 0) for child in children)
    largest = max(_under(counter, child) for child in children)
    return counter.total_bytes - inside + kept + largest, f"'{where}' ({len(children)} blocks)"


def _under(counter: SavedTensorCounter, name: str) -> int:
    return sum(b for module, b in counter.by_module.items() if module == name or module.startswith(name + "."))


def _freeze(m: Measured, baseline: MemoryReport, prefixes: Sequence[str], total: Callable[..., int]) -> WhatIf:
    frozen = [p for name, p in m.named if p.requires_grad and any(name.startswith(pre) for pre in prefixes)]
    if not frozen:
        names = sorted({name.split(".")[0] for name, _ in m.named})
        raise TrainwellError(f"--freeze {' '.join(prefixes)} matches no trainable parameter; "
                             f"top-level names: {', '.join(names[:12])}")
    for p in frozen:
        p.requires_grad_(False)
    try:
        for _, p in m.named:
            p.grad = None
        counted = m.rerun()
    finally:
        for p in frozen:
            p.requires_grad_(True)
    ids = {id(p) for p in frozen}
    numel = sum(p.numel() for p in frozen)
    return saving(f"freeze {', '.join(prefixes)}", baseline,
                  total(gradients=sum(b for k, b in m.grads.items() if k not in ids),
                        state=sum(b for k, b in m.state.items() if k not in ids),
                        activations=counted.total_bytes),
                  f"{numel:,} parameters frozen; activations re-measured")


def _lora(m: Measured, spec: OptimizerSpec, rank: int, trainable: int) -> tuple[dict[str, int], str] | None:
    linears = [mod for mod in m.model.modules() if isinstance(mod, nn.Linear) and mod.weight.requires_grad]
    if not linears:
        return None
    extra_bytes = grads = state = count = 0
    for linear in linears:
        size = linear.weight.element_size()
        state_size = 4 if spec.layout == "8bit" else size
        for shape in ((rank, linear.in_features), (linear.out_features, rank)):
            numel = shape[0] * shape[1]
            count += numel
            extra_bytes += numel * size
            grads += numel * size
            if spec.layout == "measured":  # a user's optimizer: its measured bytes per trainable parameter
                state += round(numel * sum(m.state.values()) / max(trainable, 1))
            else:
                state += spec.state_bytes(shape, state_size) + spec.step_counter_bytes
    note = (f"{count:,} adapter parameters on {len(linears)} nn.Linear layers, every base parameter frozen; "
            "activations assumed unchanged")
    return {"weights": m.weights + extra_bytes, "gradients": grads, "state": state}, note
