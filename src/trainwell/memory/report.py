"""The result of both modes: one row per kind of memory, the total, and the what-ifs."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from trainwell.errors import TrainwellError


@dataclass
class WhatIf:
    """The total per GPU under one change, and what it saves against the baseline."""

    name: str
    total_bytes: int
    saving_bytes: int
    saving_percent: float
    note: str = ""


@dataclass
class LayerUsage:
    """Bytes autograd saved while one module's forward was the innermost one running."""

    name: str
    type: str
    activation_bytes: int


@dataclass
class MemoryReport:
    """Memory for one training step, per GPU. Every ``*_bytes`` row is already sharded.

    ``total_bytes`` = weights + buffers + gradients + optimizer state + master
    weights + activations (activations count 0 when ``activations_bytes`` is
    None, i.e. not included).
    """

    mode: str  # "estimate" (from numbers) or "measure" (from a model)
    optimizer: str
    precision: str
    params: int
    trainable_params: int
    frozen_params: int
    weights_bytes: int
    buffers_bytes: int
    gradients_bytes: int
    optimizer_state_bytes: int
    master_weights_bytes: int
    activations_bytes: int | None
    total_bytes: int
    gpus: int = 1
    stage: int = 0
    total_all_gpus_bytes: int = 0
    activation_terms: dict[str, int] = field(default_factory=dict)
    top_layers: list[LayerUsage] = field(default_factory=list)
    what_if: list[WhatIf] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def activations_included(self) -> bool:
        return self.activations_bytes is not None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["activations_included"] = self.activations_included
        return data


STAGES = {0: "no sharding (DDP replicas)", 1: "ZeRO-1: optimizer state + master weights sharded",
          2: "ZeRO-2 / FSDP SHARD_GRAD_OP: + gradients sharded", 3: "ZeRO-3 / FSDP FULL_SHARD: + weights sharded"}


def build_report(*, weights: int, buffers: int, gradients: int, state: int, master: int,
                 activations: int | None, gpus: int = 1, stage: int = 0, **fields: Any) -> MemoryReport:
    """Shard the rows over ``gpus`` at ZeRO ``stage`` and add them up."""
    def split(n: int, sharded: bool) -> int:
        return -(-n // gpus) if sharded and gpus > 1 else n

    weights, gradients = split(weights, stage >= 3), split(gradients, stage >= 2)
    state, master = split(state, stage >= 1), split(master, stage >= 1)
    total = weights + buffers + gradients + state + master + (activations or 0)
    return MemoryReport(weights_bytes=weights, buffers_bytes=buffers, gradients_bytes=gradients,
                        optimizer_state_bytes=state, master_weights_bytes=master, activations_bytes=activations,
                        total_bytes=total, gpus=gpus, stage=stage, total_all_gpus_bytes=total * gpus, **fields)


def saving(name: str, baseline: MemoryReport, total: int, note: str = "") -> WhatIf:
    """A what-if row: ``total`` against the baseline's total."""
    saved = baseline.total_bytes - total
    percent = 100.0 * saved / baseline.total_bytes if baseline.total_bytes else 0.0
    return WhatIf(name, total, saved, round(percent, 2), note)


def resolve_sharding(gpus: int, stage: int | None) -> tuple[int, int]:
    """Check ``--shard``/``--stage``; sharding over several GPUs defaults to stage 3 (FSDP FULL_SHARD)."""
    if gpus < 1:
        raise TrainwellError(f"--shard must be at least 1 GPU, got {gpus}")
    if stage is None:
        stage = 3 if gpus > 1 else 0
    if stage not in (0, 1, 2, 3):
        raise TrainwellError(f"--stage must be 0, 1, 2 or 3 (ZeRO stages), got {stage}")
    return gpus, stage
