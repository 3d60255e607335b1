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

The names are ``trainwell fit``'s (``32``, ``bf16-mixed``, ``16-mixed``), the
layouts fit does not train in, and Lightning's aliases with Lightning's
meaning (``16`` = ``16-mixed``, ``bf16`` = ``bf16-mixed``); ``fp16`` and
``bfloat16`` are refused as ambiguous. ``*-mixed`` is ``torch.autocast`` as PyTorch does it: the parameters stay fp32
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
# Lightning's short names, with Lightning's meaning ("16" and "bf16" are AMP: autocast).
LIGHTNING_ALIASES = {"16": "16-mixed", "bf16": "bf16-mixed", "32-true": "32"}
# Names read one way by an AMP user (autocast) and another by a dtype (all half): refused.
_AMBIGUOUS = {"fp16": "16", "float16": "16", "half": "16", "bfloat16": "bf16", "fp32": "32",
              "float32": "32"}


def get_precision(name: str) -> Precision:
    """The precision called ``name`` (``fit``'s names, the layouts above, Lightning's aliases);
    a one-line error otherwise."""
    key = str(name).strip().lower()
    key = LIGHTNING_ALIASES.get(key, key)
    if key in PRECISIONS:
        return PRECISIONS[key]
    family = _AMBIGUOUS.get(key)
    if family == "32":
        raise TrainwellError(f"unknown precision {name!r}; full precision is '32'")
    if family is not None:
        raise TrainwellError(
            f"precision {name!r} is ambiguous: {family}-mixed is autocast (what AMP users and "
            f"Lightning's '{family}' mean), {family}-true is every tensor in half, {family}-master "
            f"half weights with an fp32 master copy; pass one of them")
    aliases = ", ".join(f"{a} = {t}" for a, t in LIGHTNING_ALIASES.items())
    raise TrainwellError(f"unknown precision {name!r}; choose one of: {', '.join(PRECISIONS)} "
                         f"(Lightning's aliases: {aliases})")
