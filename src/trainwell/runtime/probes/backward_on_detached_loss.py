"""TW108 backward-on-detached-loss: a backward whose graph reaches no parameter.

The graph of the backpropagated tensor is walked (on checked steps, a
bounded number of nodes) looking for a leaf that is an ``nn.Parameter`` or
a tensor some optimizer holds. A loss built from ``.detach()``, ``.data``,
``.item()`` or a re-wrapped tensor has none. Before the first step the
optimizer's tensors are not known yet (a hand-written loop may train plain
tensors), so a backward that reaches no ``nn.Parameter`` waits for that
step: reported if the step does not hold one of the leaves it reached (or
if no step comes), unless a backward elsewhere comes first (a phase that
updated plain tensors by hand, then another that uses an optimizer). A loss
that does not require grad at all is reported before PyTorch raises its own
error. The forwards of a step whose loss was
cut are not also reported as validation (TW202/TW203).
"""

from __future__ import annotations

from typing import Any

import torch

from trainwell.runtime.location import Location, user_location
from trainwell.runtime.probes import Probe

_MAX_NODES = 4096
_MESSAGE = ("backward() reaches no model parameter: the loss was built from a detached copy "
            "(.detach(), .data, .item() or a new tensor), so no gradient reaches the model")


class BackwardOnDetachedLoss(Probe):
    codes = ("TW108",)

    def __init__(self, session: Any) -> None:
        super().__init__(session)
        self.waiting: tuple[int, Location | None, list[torch.Tensor]] | None = None  # (step, where, leaves)

    def on_backward(self, tensors: tuple[torch.Tensor, ...]) -> None:
        session = self.session
        if not tensors or not isinstance(tensors[0], torch.Tensor):
            return
        root = tensors[0]
        if self.waiting is not None and user_location() != self.waiting[1]:
            self.waiting = None  # a backward elsewhere before any step: that phase trained plain tensors by hand
        if not root.requires_grad:
            self._report("the loss passed to backward() does not require grad: it was cut from the model's graph", user_location())
            return
        if not session.checks(session.step + 1):
            return
        leaves: list[torch.Tensor] = []
        if any(self._reaches_parameter(t, leaves) for t in tensors if isinstance(t, torch.Tensor)):
            return
        if session.optimizers:
            self._report(_MESSAGE, user_location())
        elif self.waiting is None:
            self.waiting = (session.step + 1, user_location(), leaves)

    def on_step_pre(self, optimizer: torch.optim.Optimizer, closure: Any) -> None:
        waiting, self.waiting = self.waiting, None
        if waiting is not None:
            held = {id(p) for p in self.session.info(optimizer).params}
            if not any(id(leaf) in held for leaf in waiting[2]):
                self._report(_MESSAGE, waiting[1], waiting[0])

    def on_finish(self) -> None:
        waiting, self.waiting = self.waiting, None
        if waiting is not None:
            self._report(_MESSAGE, waiting[1], waiting[0])

    def _reaches_parameter(self, tensor: torch.Tensor, leaves: list[torch.Tensor]) -> bool:
        if tensor.grad_fn is None:
            leaves.append(tensor)
            return self._trained(tensor)
        stack, seen = [tensor.grad_fn], set()
        while stack and len(seen) < _MAX_NODES:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            variable = getattr(node, "variable", None)
            if variable is not None:
                if self._trained(variable):
                    return True
                leaves.append(variable)
            stack.extend(next_node for next_node, _ in node.next_functions)
        return len(seen) >= _MAX_NODES  # too large to judge: assume it does

    def _trained(self, tensor: torch.Tensor) -> bool:
        return isinstance(tensor, torch.nn.Parameter) or self.session.owner_of(tensor) is not None

    def _report(self, message: str, where: Location | None, step: int | None = None) -> None:
        session = self.session
        for _, info in session.live_optimizers():  # their missing gradients are this bug, not TW603
            session.explained_params.update(id(p) for p in info.params)
        session.cut_steps.add(step if step is not None else session.step + 1)
        session.report("TW108", message, where, step=step,
                       hint="compute the loss from the model's output tensors themselves; use .detach()/.item() only for logging")
