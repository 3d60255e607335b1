"""TW108 backward-on-detached-loss: a backward whose graph reaches no parameter.

The graph of the backpropagated tensor is walked (on sampled steps, a
bounded number of nodes) looking for a leaf that is an ``nn.Parameter`` or
a tensor some optimizer holds. A loss built from ``.detach()``, ``.data``,
``.item()`` or a re-wrapped tensor has none. A loss that does not require
grad at all is reported before PyTorch raises its own error.
"""

from __future__ import annotations


import torch

from trainwell.runtime.location import user_location
from trainwell.runtime.probes import Probe
from trainwell.runtime.session import sampled

_MAX_NODES = 4096


class BackwardOnDetachedLoss(Probe):
    codes = ("TW108",)

    def on_backward(self, tensors: tuple[torch.Tensor, ...]) -> None:
        session = self.session
        if not tensors or not isinstance(tensors[0], torch.Tensor):
            return
        root = tensors[0]
        if not root.requires_grad:
            self._report("the loss passed to backward() does not require grad: it was cut from the model's graph")
            return
        if not session.optimizers or not sampled(session.step + 1):
            return  # leaves are judged against the optimizers' tensors, known after a first step
        if not any(self._reaches_parameter(t) for t in tensors if isinstance(t, torch.Tensor)):
            self._report("backward() reaches no model parameter: the loss was built from a detached copy "
                         "(.detach(), .data, .item() or a new tensor), so no gradient reaches the model")

    def _reaches_parameter(self, tensor: torch.Tensor) -> bool:
        if tensor.grad_fn is None:
            return self._trained(tensor)
        stack, seen = [tensor.grad_fn], set()
        while stack and len(seen) < _MAX_NODES:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            variable = getattr(node, "variable", None)
            if variable is not None and self._trained(variable):
                return True
            stack.extend(next_node for next_node, _ in node.next_functions)
        return len(seen) >= _MAX_NODES  # too large to judge: assume it does

    def _trained(self, tensor: torch.Tensor) -> bool:
        return isinstance(tensor, torch.nn.Parameter) or self.session.owner_of(tensor) is not None

    def _report(self, message: str) -> None:
        for _, info in self.session.live_optimizers():  # their missing gradients are this bug, not TW603
            self.session.explained_params.update(id(p) for p in info.params)
        self.session.report("TW108", message, user_location(), hint="compute the loss from the model's output tensors themselves; use .detach()/.item() only for logging")
