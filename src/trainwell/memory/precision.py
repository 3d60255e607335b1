"""What each training precision keeps per parameter, and in which dtype activations live.

Rows by precision (bytes per parameter):

=================  =======  =====  ======  =====================  ============================
precision          weights  grads  master  optimizer state dtype  activations
=================  =======  =====  ======  =====================  ============================
32                 4        4      0       fp32                   fp32
bf16-mixed         4        4      0       fp32                   autocast: matmul inputs half,
16-mixed                                                          residual stream / norms fp32,
                                                                  + half copies of matmul weights
bf16-true          2        2      0       half (param dtype)     half
16-true
bf16-master        2        2      4       fp32                   half
16-master
=================  =======  =====  ======  =====================  ============================

``*-mixed`` is ``torch.autocast`` as PyTorch does it: the parameters stay fp32
and are themselves the master weights (no separate copy); autocast casts
each matmul weight to half once per forward and backward keeps that copy.
``*-true`` is Lightning's "true" half precision: everything half, optimizer
state in the parameter dtype. ``*-master`` is the Megatron/DeepSpeed layout:
half weights and gradients, an fp32 master copy, fp32 optimizer state
(ZeRO's 2 + 2 + 12 bytes per parameter with Adam).
"""

from __future__ import annotations

from dataclasses import dataclass

from trainwell.errors import TrainwellError


@dataclass(frozen=True)
class Precision:
    name: str
    weight_bytes: int
    grad_bytes: int
    master_bytes: int
    state_bytes: int  # element size of optimizer state
    activations: str  # "fp32" | "half" | "autocast"
    half_name: str  # "bf16" or "fp16" (for autocast / half); "fp32" otherwise

    @property
    def autocast(self) -> bool:
        return self.activations == "autocast"


PRECISIONS: dict[str, Precision] = {
    "32": Precision("32", 4, 4, 0, 4, "fp32", "fp32"),
    "bf16-mixed": Precision("bf16-mixed", 4, 4, 0, 4, "autocast", "bf16"),
    "16-mixed": Precision("16-mixed", 4, 4, 0, 4, "autocast", "fp16"),
    "bf16-true": Precision("bf16-true", 2, 2, 0, 2, "half", "bf16"),
    "16-true": Precision("16-true", 2, 2, 0, 2, "half", "fp16"),
    "bf16-master": Precision("bf16-master", 2, 2, 4, 4, "half", "bf16"),
    "16-master": Precision("16-master", 2, 2, 4, 4, "half", "fp16"),
}
_ALIASES = {"32-true": "32", "fp32": "32", "float32": "32", "bf16": "bf16-true", "fp16-mixed": "16-mixed",
            "fp16": "16-true", "fp16-true": "16-true", "fp16-master": "16-master"}


def get_precision(name: str) -> Precision:
    """The precision called ``name``; a one-line error listing the valid names otherwise."""
    key = str(name).strip().lower()
    key = _ALIASES.get(key, key)
    if key not in PRECISIONS:
        raise TrainwellError(f"unknown precision {name!r}; choose one of: {', '.join(PRECISIONS)}")
    return PRECISIONS[key]
