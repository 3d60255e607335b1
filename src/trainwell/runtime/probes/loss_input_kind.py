"""TW301 double-softmax and TW303 nll-without-log-probs: what the loss really receives.

On sampled steps: an input whose graph node is a softmax (cross_entropy) or
a sigmoid (binary_cross_entropy_with_logits), also seen through reshapes,
indexing and copies (``torch.sigmoid(...).squeeze(1)`` in a ``forward``), is
reported at once, without reading a value. Otherwise the input of ``cross_entropy`` is tested for
being probabilities (rows non-negative summing to one) and the input of
``nll_loss`` for being log-probabilities (each row's logsumexp is zero).
Values inside [0, 1] alone prove nothing for BCE (small logits look the
same), so BCE relies on the graph only. A value test is a device tensor
read one step later, when it is ready: no host sync in the step. A place is
reported when every sampled call there (at least two, or all at the end of
the run) agrees.
"""

from __future__ import annotations

from typing import Any

import torch

from trainwell.runtime.location import Location, user_location
from trainwell.runtime.probes import Probe

_CALLS_PER_STEP = 4
_TOLERANCE = 1e-3
_MIN_ELEMENTS = 8


# autograd nodes that only move, reshape or copy values: a sigmoid (softmax) output seen through them is one still
_SHAPE_ONLY = frozenset({
    "ViewBackward", "UnsafeViewBackward", "ReshapeAliasBackward", "SqueezeBackward", "UnsqueezeBackward",
    "ExpandBackward", "SelectBackward", "SliceBackward", "TBackward", "TransposeBackward", "PermuteBackward",
    "CloneBackward", "ToCopyBackward", "AsStridedBackward", "IndexBackward", "AliasBackward",
})
_MAX_HOPS = 8


def producer(tensor: torch.Tensor) -> str:
    """The name of the autograd node that computed ``tensor``'s values, seen through reshapes and copies."""
    node = tensor.grad_fn
    for _ in range(_MAX_HOPS):
        if node is None:
            return ""
        name = type(node).__name__
        if name.rstrip("0123456789") not in _SHAPE_ONLY:
            return name
        inputs = [n for n, _ in node.next_functions if n is not None]
        if len(inputs) != 1:
            return name
        node = inputs[0]
    return ""


def _class_dim(x: torch.Tensor) -> int:
    return 0 if x.dim() == 1 else 1


def looks_like_probabilities(kind: str, x: torch.Tensor) -> torch.Tensor | None:
    """A device bool: the rows of ``x`` are what a softmax outputs (None: cannot tell)."""
    if kind == "binary_cross_entropy_with_logits":
        return None
    if x.numel() < _MIN_ELEMENTS or x.dim() == 0 or x.shape[_class_dim(x)] < 2:
        return None
    return (x.min() >= 0) & ((x.sum(_class_dim(x)) - 1).abs().max() < _TOLERANCE)


def not_log_probabilities(x: torch.Tensor) -> torch.Tensor | None:
    """A device bool: some row of ``x`` is not log-probabilities (logsumexp far from zero)."""
    if x.dim() == 0 or x.shape[_class_dim(x)] < 2:
        return None
    return torch.logsumexp(x.float(), dim=_class_dim(x)).abs().max() > 1e-2


class LossInputKind(Probe):
    codes = ("TW301", "TW303")

    def __init__(self, session: Any) -> None:
        super().__init__(session)
        self.calls_this_step = 0
        self.waiting: list[tuple[int, str, Location | None, torch.Tensor, str]] = []
        self.verdicts: dict[tuple[str, Location | None], list[bool]] = {}
        self.messages: dict[tuple[str, Location | None], str] = {}
        self.first_step: dict[tuple[str, Location | None], int] = {}  # the step of a place's first flagged call

    def on_loss_call(self, kind: str, input: Any, target: Any) -> None:
        if not self.session.checks(self.session.step + 1) or self.calls_this_step >= _CALLS_PER_STEP:
            return
        if not isinstance(input, torch.Tensor) or not input.is_floating_point():
            return
        self.calls_this_step += 1
        node = producer(input)
        squashed = {"cross_entropy": "SoftmaxBackward0", "binary_cross_entropy_with_logits": "SigmoidBackward0"}.get(kind)
        if node == squashed:
            self.messages[("TW301", where := user_location())] = kind
            self._report(("TW301", where), 1)
            return
        with torch.no_grad():
            x = input.detach()
            if kind == "nll_loss":
                code, flag = "TW303", not_log_probabilities(x)
            else:
                code, flag = "TW301", looks_like_probabilities(kind, x)
        if flag is not None:
            where = user_location()
            between_steps = not torch.is_grad_enabled()  # an evaluation: numbered by the steps completed
            self.first_step.setdefault((code, where), self.session.step + (0 if between_steps else 1))
            self.waiting.append((self.session.step, code, where, flag, kind))

    def on_step_post(self, optimizer: torch.optim.Optimizer) -> None:
        self.calls_this_step = 0
        self._read(before=self.session.step - 1)  # last iteration's flags: finished on the device by now

    def on_finish(self) -> None:
        self._read(before=None)
        for key, verdicts in self.verdicts.items():
            if verdicts and all(verdicts):
                self._report(key, len(verdicts))

    def _read(self, before: int | None) -> None:
        ready = [w for w in self.waiting if before is None or w[0] < before]
        self.waiting = [w for w in self.waiting if not (before is None or w[0] < before)]
        for _, code, where, flag, kind in ready:
            key = (code, where)
            verdicts = self.verdicts.setdefault(key, [])
            verdicts.append(bool(flag))
            self.messages[key] = kind
            if len(verdicts) >= 2 and all(verdicts):
                self._report(key, len(verdicts))

    def _report(self, key: tuple[str, Location | None], calls: int) -> None:
        code, where = key
        kind = self.messages[key]
        if code == "TW303":
            message = "nll_loss receives values that are not log-probabilities (their logsumexp is not 0): probabilities or raw logits"
            hint = "feed NLLLoss the output of log_softmax (or use CrossEntropyLoss on raw logits)"
        elif kind == "binary_cross_entropy_with_logits":
            message = "BCEWithLogitsLoss receives values inside [0, 1] (a sigmoid output): it applies a sigmoid again"
            hint = "feed it the raw logits; apply sigmoid only to report probabilities"
        else:
            message = "cross_entropy receives probabilities (rows non-negative summing to one): softmax is applied twice"
            hint = "feed CrossEntropyLoss the raw logits; remove the softmax (or nn.Softmax layer) before it"
        self.session.report(code, message, where, hint=hint, step=self.first_step.get(key))
