"""Bytes of optimizer state per parameter, for each optimizer trainwell knows.

Dense optimizers keep whole copies of each parameter (Adam: ``exp_avg`` and
``exp_avg_sq``) in the state dtype, which is the dtype of the parameters they
update (fp32 master weights under DeepSpeed-style mixed precision).

8-bit Adam follows bitsandbytes' block-wise layout (``bnb.optim.Adam8bit``):
two ``uint8`` states (2 bytes/param) plus one fp32 absmax per block of
``BNB_BLOCK_SIZE`` = 2048 elements for each state; tensors with fewer than
``BNB_MIN_8BIT_SIZE`` = 4096 elements keep two fp32 states instead. The two
256-entry quantization maps are shared by all tensors and not counted.

Adafactor factors the second moment of every tensor with two or more
dimensions into row and column statistics (``torch.optim.Adafactor``:
``row_var`` has ``prod(shape[:-1])`` elements, ``col_var``
``prod(shape[:-2]) * shape[-1]``) and keeps a full vector for 1-D tensors; no
first moment (no momentum).

torch's implementations also keep a 0-dim float32 ``step`` tensor per parameter
tensor (4 bytes each). Model mode counts them (they are real tensors); the
analytic mode, which knows no tensor count, leaves them out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from collections.abc import Callable
from typing import Any

from trainwell.errors import TrainwellError

BNB_BLOCK_SIZE = 2048
BNB_MIN_8BIT_SIZE = 4096
# Analytic mode without layer shapes: Adafactor's factored statistics depend on
# matrix shapes; assume square matrices of this side (a 7B-class width).
DEFAULT_MATRIX_SIDE = 4096


@dataclass(frozen=True)
class OptimizerSpec:
    """How much state one optimizer keeps, and how to build the real one."""

    name: str
    summary: str
    layout: str  # "dense" | "factored" | "8bit" | "measured" (a user's optimizer: model mode only)
    copies: int = 0  # dense: state tensors shaped like the parameter
    torch_class: str | None = None  # torch.optim class for model mode; None = not in torch
    torch_kwargs: dict[str, Any] = field(default_factory=dict)
    factory: Callable[[list], Any] | None = None  # builds a user's optimizer on a list of parameters

    @property
    def step_counter_bytes(self) -> int:
        """torch keeps a 0-dim float32 ``step`` tensor per parameter for these (bitsandbytes an int)."""
        return 4 if self.torch_class in ("Adam", "AdamW", "Adagrad", "RMSprop", "Adafactor") else 0

    def state_bytes(self, shape: tuple[int, ...], state_element_size: int) -> int:
        """State bytes for one parameter tensor of ``shape`` (no ``step`` counters)."""
        numel = math.prod(shape)
        if self.layout == "dense":
            return self.copies * numel * state_element_size
        if self.layout == "8bit":
            if numel < BNB_MIN_8BIT_SIZE:
                return 2 * numel * 4
            blocks = -(-numel // BNB_BLOCK_SIZE)
            return 2 * numel + 2 * blocks * 4
        if len(shape) < 2:
            return numel * state_element_size
        rows = math.prod(shape[:-1])
        cols = math.prod(shape[:-2]) * shape[-1]
        return (rows + cols) * state_element_size

    def bytes_per_parameter(self, state_element_size: int, matrix_side: int | None = None) -> float:
        """State bytes per parameter when only the parameter count is known."""
        if self.layout == "dense":
            return float(self.copies * state_element_size)
        if self.layout == "8bit":
            return 2 + 2 * 4 / BNB_BLOCK_SIZE  # every tensor assumed >= 4096 elements
        side = matrix_side or DEFAULT_MATRIX_SIDE
        return 2 * side * state_element_size / (side * side)


_SPECS = [
    OptimizerSpec("sgd", "SGD without momentum: no state", "dense", 0, "SGD", {"momentum": 0.0}),
    OptimizerSpec("sgd-momentum", "SGD with momentum: one buffer", "dense", 1, "SGD", {"momentum": 0.9}),
    OptimizerSpec("adam", "Adam: exp_avg + exp_avg_sq", "dense", 2, "Adam"),
    OptimizerSpec("adamw", "AdamW: exp_avg + exp_avg_sq", "dense", 2, "AdamW"),
    OptimizerSpec("adam-amsgrad", "Adam with amsgrad: + max_exp_avg_sq", "dense", 3, "Adam", {"amsgrad": True}),
    OptimizerSpec("adamw-amsgrad", "AdamW with amsgrad: + max_exp_avg_sq", "dense", 3, "AdamW", {"amsgrad": True}),
    OptimizerSpec("adagrad", "Adagrad: sum of squares", "dense", 1, "Adagrad"),
    OptimizerSpec("rmsprop", "RMSprop: square_avg", "dense", 1, "RMSprop"),
    OptimizerSpec("rmsprop-momentum", "RMSprop with momentum: + momentum_buffer", "dense", 2, "RMSprop",
                  {"momentum": 0.9}),
    OptimizerSpec("rmsprop-centered", "centered RMSprop: + grad_avg", "dense", 2, "RMSprop", {"centered": True}),
    OptimizerSpec("rmsprop-centered-momentum", "centered RMSprop with momentum", "dense", 3, "RMSprop",
                  {"centered": True, "momentum": 0.9}),
    OptimizerSpec("adam8bit", "8-bit Adam (bitsandbytes, block-wise)", "8bit"),
    OptimizerSpec("adamw8bit", "8-bit AdamW (bitsandbytes, block-wise)", "8bit"),
    OptimizerSpec("adafactor", "Adafactor: factored second moment, no momentum", "factored", 0, "Adafactor"),
]
OPTIMIZERS: dict[str, OptimizerSpec] = {spec.name: spec for spec in _SPECS}
_ALIASES = {"adam-8bit": "adam8bit", "adamw-8bit": "adamw8bit", "bnb-adam8bit": "adam8bit", "sgdm": "sgd-momentum"}


def get_optimizer(name: str) -> OptimizerSpec:
    """The spec for ``name`` (case-insensitive); a one-line error listing the valid names otherwise."""
    key = name.strip().lower().replace("_", "-")
    key = _ALIASES.get(key, key)
    if key not in OPTIMIZERS:
        raise TrainwellError(f"unknown optimizer {name!r}; choose one of: {', '.join(OPTIMIZERS)}")
    return OPTIMIZERS[key]
