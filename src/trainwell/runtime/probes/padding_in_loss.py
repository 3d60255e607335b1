"""TW305 padding-in-loss: padded target positions that the cross-entropy does not ignore.

At backward (checked steps), the loss's graph is searched for the NLL node
that ``cross_entropy`` / ``nll_loss`` build; it keeps the target, the
``ignore_index`` and the reduction. The targets are seen as rows (a 2-D target,
the 2-D tensor a flattened one was viewed from, or the [batch, time] sizes of
the logits before they were flattened). Rows padded to a common length end
with a run of one value: most rows end with it, the runs differ in length,
and some row (the longest sequence) does not end with it; the value occurs
nowhere but in those end runs, and one run is longer than one position. When that value is
not the ``ignore_index``, the padding is scored as a real class. The target
is copied on the device and read one step later (no host sync in the step).
``reduction='none'`` is silent: a mask may follow. The finding is on the loss
call: a loss module's, or the functional call that received that target.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from trainwell.runtime.location import Location, user_location
from trainwell.runtime.probes import Probe

_MAX_NODES = 64
_KEPT_CALLS = 4
_NLL = {"NllLossBackward0", "NllLoss2DBackward0"}
_FLATTENS = {"ViewBackward0", "ReshapeAliasBackward0", "UnsafeViewBackward0"}


def _signed(value: int) -> int:
    """The saved ignore_index is an unsigned 64-bit copy of a signed one."""
    return value - 2**64 if value >= 2**63 else value


def padding(rows: torch.Tensor) -> tuple[int, float] | None:
    """(pad value, share of positions it pads) when ``rows`` look padded at their ends, else None."""
    if rows.dim() != 2 or rows.shape[0] < 2 or rows.shape[1] < 2 or rows.is_floating_point():
        return None
    last = rows[:, -1]
    value = int(torch.mode(last).values)
    ends = rows == value
    # trailing run of `value` in each row: positions from the end while equal
    run = torch.flip(ends, dims=[1]).long().cumprod(dim=1).sum(dim=1)
    padded = int((run > 0).sum())
    if padded < 2 or padded == rows.shape[0] or len(set(run.tolist())) < 2:
        return None  # not most rows, or every row (nothing is the longest), or all runs equal (fixed length)
    if padded * 2 < rows.shape[0]:
        return None
    # Padding sits only at the ends, and some sequence is padded by more than one position; a token that also
    # occurs inside the rows (random or real text ending in a common token) is data, not padding.
    if int(run.max()) < 2 or int(ends.sum()) != int(run.sum()):
        return None
    return value, float(run.sum()) / rows.numel()


class PaddingInLoss(Probe):
    codes = ("TW305",)

    def __init__(self, session: Any) -> None:
        super().__init__(session)
        self.loss_calls: dict[int, tuple[Any, Location | None]] = {}  # id(grad_fn) -> (grad_fn, call site); a few, until backward
        self.targets: list[tuple[torch.Tensor, Location | None]] = []  # targets of F.cross_entropy / F.nll_loss calls, until backward
        self.waiting: list[tuple[int, torch.Tensor, int, Location | None]] = []  # (step, rows, ignore_index, where)
        self.done = False

    def on_root_forward(self, module: torch.nn.Module, output: Any) -> None:
        if isinstance(module, torch.nn.modules.loss._Loss) and isinstance(output, torch.Tensor) and output.grad_fn is not None:
            if len(self.loss_calls) >= _KEPT_CALLS:
                self.loss_calls.pop(next(iter(self.loss_calls)))
            self.loss_calls[id(output.grad_fn)] = (output.grad_fn, user_location())

    def on_loss_call(self, kind: str, input: Any, target: Any) -> None:
        if kind in ("cross_entropy", "nll_loss") and isinstance(target, torch.Tensor):
            if len(self.targets) >= _KEPT_CALLS:
                self.targets.pop(0)
            self.targets.append((target, user_location()))

    def on_backward(self, tensors: tuple[torch.Tensor, ...]) -> None:
        calls, self.loss_calls = self.loss_calls, {}
        targets, self.targets = self.targets, []
        session = self.session
        if self.done or not tensors or not isinstance(tensors[0], torch.Tensor) or tensors[0].grad_fn is None:
            return
        if not session.checks(session.step + 1) or len(self.waiting) > 8:
            return
        for node in _nodes(tensors[0].grad_fn):
            if type(node).__name__ not in _NLL or node._saved_reduction == 0:
                continue
            rows = _rows(node)
            if rows is not None:
                known = calls.get(id(node))
                saved = node._saved_target
                called = next((w for t, w in targets if _same_data(t, saved)), None)  # F.cross_entropy's own line
                where = known[1] if known is not None and known[0] is node else called or user_location()
                self.waiting.append((session.step, rows.detach().clone(), _signed(node._saved_ignore_index), where))
            return

    def on_step_post(self, optimizer: torch.optim.Optimizer) -> None:
        self._read(before=self.session.step - 1)

    def on_finish(self) -> None:
        self._read(before=None)

    def _read(self, before: int | None) -> None:
        ready = [w for w in self.waiting if before is None or w[0] < before]
        self.waiting = [w for w in self.waiting if not (before is None or w[0] < before)]
        for _, rows, ignore, where in ready:
            found = padding(rows.cpu())
            if self.done or found is None or found[0] == ignore:
                continue
            value, share = found
            self.done = True
            self.session.report(
                "TW305",
                f"the targets are padded with {value}, which the loss does not ignore (ignore_index={ignore}): "
                f"padding fills {share:.0%} of the target positions ({rows.shape[0]} rows of {rows.shape[1]}), and each "
                f"is trained as a real class {value}",
                where,
                hint=f"pad the targets with {ignore} (padding_value={ignore}), or pass ignore_index={value} to the loss",
            )


def _same_data(given: torch.Tensor, saved: Any) -> bool:
    """The target a loss call received is the one its NLL node saved (itself, or a view of the same memory)."""
    if given is saved:
        return True
    return (isinstance(saved, torch.Tensor) and given.numel() == saved.numel()
            and given.untyped_storage().data_ptr() == saved.untyped_storage().data_ptr())


def _nodes(root: Any) -> list[Any]:
    seen, todo, out = set(), [root], []
    while todo and len(out) < _MAX_NODES:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        out.append(node)
        if type(node).__name__ not in _NLL:
            todo.extend(n for n, _ in node.next_functions)
    return out


def _rows(node: Any) -> torch.Tensor | None:
    """The NLL node's target as [rows, positions], or None when its rows cannot be told."""
    target = node._saved_target
    if not isinstance(target, torch.Tensor):
        return None
    if target.dim() == 2:
        return target
    if target.dim() > 2:
        return target.reshape(target.shape[0], -1)
    base = target._base
    if base is not None and base.dim() == 2 and base.numel() == target.numel():
        return base
    inner = node.next_functions[0][0]  # log_softmax of the logits, which were flattened from [batch, time, classes]
    if inner is not None and type(inner).__name__ == "LogSoftmaxBackward0":
        inner = inner.next_functions[0][0]
    if inner is not None and type(inner).__name__ in _FLATTENS:
        sizes = tuple(getattr(inner, "_saved_self_sym_sizes", ()) or ())
        if len(sizes) == 3 and math.prod(sizes[:2]) == target.numel():
            return target.reshape(sizes[0], sizes[1])
    return None
