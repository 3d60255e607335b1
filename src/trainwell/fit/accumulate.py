"""Gradient accumulation: which micro-batches form one optimizer step.

Windows are counted from the start of each epoch: with 10 batches and
``accumulate=4`` the windows are 4, 4, 2. Each micro-batch's loss is divided by
the REAL size of its window, so the last, partial window (2 batches) is
divided by 2, not 4; dividing it by 4 would halve that step's gradient.
"""

from __future__ import annotations

from typing import Any

import torch


class Windows:
    """The accumulation windows of one epoch of ``num_batches`` micro-batches."""

    def __init__(self, accumulate: int, num_batches: int | None) -> None:
        self.k = accumulate
        self.num_batches = num_batches
        # Micro-batches from ``partial_start`` on belong to the last, partial window.
        if num_batches is None:
            self.partial_start = None
            self.partial_size = accumulate
        else:
            rest = num_batches % accumulate
            self.partial_start = num_batches - rest if rest else num_batches
            self.partial_size = rest or accumulate

    def divisor(self, index: int) -> int:
        """The size of the window that micro-batch ``index`` belongs to."""
        if self.partial_start is not None and index >= self.partial_start:
            return self.partial_size
        return self.k


def window_grads(params: list[torch.nn.Parameter]) -> list[torch.Tensor | None]:
    """The gradients of an unfinished window, for a checkpoint."""
    return [None if p.grad is None else p.grad.detach().clone() for p in params]


def restore_window_grads(params: list[torch.nn.Parameter], grads: list[Any]) -> None:
    """Put back the gradients saved by ``window_grads``."""
    for p, g in zip(params, grads):
        p.grad = None if g is None else g.to(device=p.device, dtype=p.dtype)
