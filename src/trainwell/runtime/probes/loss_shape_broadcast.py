"""TW304 loss-shape-broadcast: an element-wise loss taken over a broadcast grid.

Read from the loss's autograd graph at backward (checked steps only; shapes
are metadata, never a host sync):

- ``mse_loss`` / ``smooth_l1_loss`` / ``huber_loss`` keep their expanded
  input and target: when either was expanded, the node holds the grid, the
  input's shape before the expand, and the target's (read from its strides);
- a hand-written ``((out - y) ** 2).mean()`` or ``(out - y).abs().mean()`` (and
  ``l1_loss``, which is built that way): the reduction keeps the grid's shape;
  the difference's first operand must be a model output seen by this probe
  (a root forward), whose shape it knows.

Reported only when the grid has more elements than the model's output: a
deliberate broadcast against a scalar or a per-feature weight leaves the grid
the shape of the output and is silent. A loss module is reported at its call;
a functional or hand-written loss at its backward().
"""

from __future__ import annotations

import math
from typing import Any

import torch

from trainwell.runtime.location import Location, user_location
from trainwell.runtime.probes import Probe

_MAX_NODES = 64
_KEPT_OUTPUTS = 4
_LOSS_NODES = {"MseLossBackward0": "mse_loss", "SmoothL1LossBackward0": "smooth_l1_loss", "HuberLossBackward0": "huber_loss"}
_REDUCTIONS = {"MeanBackward0", "SumBackward0"}
_ELEMENTWISE = {"PowBackward0", "AbsBackward0", "MulBackward0", "DivBackward0", "SqrtBackward0", "SgnBackward0"}


def _shape_before_expand(expanded: torch.Tensor) -> tuple[int, ...]:
    """The shape a tensor had before ``expand``/broadcasting: dims of stride 0 were size 1, leading ones absent."""
    dims = [1 if stride == 0 else size for size, stride in zip(expanded.shape, expanded.stride())]
    while dims and dims[0] == 1 and expanded.stride()[0] == 0 and len(dims) > 1:
        dims.pop(0)
        expanded = expanded[0]
    return tuple(dims)


def _squeezed(node: Any) -> tuple[int, ...] | None:
    """The output shape of a squeeze node (from its input's sizes and dims), else None."""
    name = type(node).__name__ if node is not None else ""
    if not name.startswith("SqueezeBackward"):
        return None
    sizes = tuple(node._saved_self_sym_sizes)
    dims = getattr(node, "_saved_dim", None)
    if dims is None:
        return tuple(d for d in sizes if d != 1)
    dims = dims if isinstance(dims, tuple) else (dims,)
    wanted = {(d - 2**64 if d >= 2**63 else d) % len(sizes) for d in dims} if sizes else set()
    return tuple(d for i, d in enumerate(sizes) if not (i in wanted and d == 1))


class LossShapeBroadcast(Probe):
    codes = ("TW304",)

    def __init__(self, session: Any) -> None:
        super().__init__(session)
        # The latest root-forward outputs: id(grad_fn) -> (grad_fn, shape, where a loss module was called or None).
        # Nodes take no weak reference: a few are held, and all are let go at every backward.
        self.outputs: dict[int, tuple[Any, tuple[int, ...], Location | None]] = {}

    def on_root_forward(self, module: torch.nn.Module, output: Any) -> None:
        if isinstance(output, torch.Tensor) and output.grad_fn is not None:
            if len(self.outputs) >= _KEPT_OUTPUTS:
                self.outputs.pop(next(iter(self.outputs)))
            where = user_location() if isinstance(module, torch.nn.modules.loss._Loss) else None
            self.outputs[id(output.grad_fn)] = (output.grad_fn, tuple(output.shape), where)

    def _output(self, node: Any) -> tuple[tuple[int, ...], Location | None] | None:
        """The shape of the root-forward output whose grad_fn is ``node``, and a loss module's call site."""
        known = self.outputs.get(id(node))
        return (known[1], known[2]) if known is not None and known[0] is node else None

    def on_backward(self, tensors: tuple[torch.Tensor, ...]) -> None:
        session = self.session
        if not tensors or not isinstance(tensors[0], torch.Tensor) or tensors[0].grad_fn is None:
            return
        try:
            if session.checks(session.step + 1):
                for node in self._nodes(tensors[0].grad_fn):
                    found = self._broadcast(node)
                    if found is not None:
                        self._report(node, *found)
                        return
        finally:
            self.outputs.clear()

    def _nodes(self, root: Any) -> list[Any]:
        """The loss's graph near its root: the nodes a reduction or a loss can sit at."""
        seen, todo, out = set(), [root], []
        while todo and len(out) < _MAX_NODES:
            node = todo.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            out.append(node)
            known = self._output(node)
            if type(node).__name__ in _LOSS_NODES or (known is not None and known[1] is None):
                continue  # below a loss or a model's output lies the model itself
            todo.extend(n for n, _ in node.next_functions)
        return out

    def _broadcast(self, node: Any) -> tuple[tuple[int, ...], tuple[int, ...] | None, tuple[int, ...]] | None:
        """(input shape, target shape or None, grid) when ``node`` is a loss over a broadcast grid."""
        name = type(node).__name__
        if name in _LOSS_NODES:
            expanded = getattr(node, "_saved_self", None)
            target = getattr(node, "_saved_target", None)
            if not isinstance(expanded, torch.Tensor) or not isinstance(target, torch.Tensor):
                return None
            grid = tuple(expanded.shape)
            given, wanted = _shape_before_expand(expanded), _shape_before_expand(target)
            if given != wanted and math.prod(grid) > max(math.prod(given), math.prod(wanted)):
                return given, wanted, grid
            return None
        if name not in _REDUCTIONS or getattr(node, "_saved_dim", None) not in (None, ()):
            return None
        grid = tuple(getattr(node, "_saved_self_sym_sizes", ()) or ())
        inner = node.next_functions[0][0] if node.next_functions else None
        while inner is not None and type(inner).__name__ in _ELEMENTWISE:
            inner = inner.next_functions[0][0]
        if inner is None or type(inner).__name__ != "SubBackward0":
            return None
        operand = inner.next_functions[0][0]
        if operand is not None and type(operand).__name__ == "ExpandBackward0":  # l1_loss broadcasts before it subtracts
            compared = tuple(operand._saved_self_sym_sizes)
            operand = operand.next_functions[0][0]
        else:
            compared = _squeezed(operand)  # `out.squeeze(-1) - y` compares the squeezed output
        while operand is not None and type(operand).__name__.startswith("SqueezeBackward"):
            operand = operand.next_functions[0][0]
        known = self._output(operand) if operand is not None else None
        if known is None or not grid:
            return None
        shape = compared if compared is not None else known[0]
        return (shape, None, grid) if math.prod(grid) > math.prod(shape) else None

    def _report(self, node: Any, given: tuple[int, ...], wanted: tuple[int, ...] | None, grid: tuple[int, ...]) -> None:
        known = self._output(node)
        where = known[1] if known is not None else None  # a loss module's call
        target = f"a target of shape {list(wanted)}" if wanted is not None else "the target"
        self.session.report(
            "TW304",
            f"the loss compares an output of shape {list(given)} with {target}: they broadcast to {list(grid)}, "
            f"so every output is compared with every target ({math.prod(grid)} pairs instead of {math.prod(given)}) "
            "and the model learns to predict the mean",
            where or user_location(),
            hint="make the shapes equal before the loss: output.squeeze(-1), target.unsqueeze(-1) or target.view_as(output)",
        )
